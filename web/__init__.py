"""The web layer: a Flask app (factory) over the snapshot hub, the rules core and the saved game.

It only composes: the camera thread publishes snapshots, the rules answer, the store saves."""

from __future__ import annotations

from flask import Flask

from companion.web.context import Companion


def create_app(companion: Companion, config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(JSON_SORT_KEYS=False, MAX_CONTENT_LENGTH=64 * 1024)
    if config:
        app.config.update(config)
    app.json.sort_keys = False
    app.extensions["companion"] = companion

    from companion.web import api, auth, pages

    app.register_blueprint(auth.bp)
    app.register_blueprint(pages.bp)
    api.register(app)
    return app
