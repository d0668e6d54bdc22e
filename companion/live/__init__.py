"""The live runtime: the thread that owns the camera (`camera_loop`), the snapshots it publishes
(`snapshots`) and the saved game (`store`). No Flask: the web layer reads them."""
