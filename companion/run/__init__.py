"""What `companion serve` and `companion demo` run: the live runtime and the web app put together
under waitress (`server`), and the demo's scripted tables (`demo`), which differ from a real table
only in their frame source and the taps the script makes for the players."""
