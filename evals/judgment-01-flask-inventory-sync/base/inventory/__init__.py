"""Inventory service: stock levels for the warehouse."""

import os

from flask import Flask


def create_app(test_config=None):
    """Create and configure the application."""
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(DATABASE=os.path.join(app.instance_path, "inventory.sqlite"))
    if test_config is not None:
        app.config.update(test_config)
    os.makedirs(app.instance_path, exist_ok=True)

    from . import db, views

    db.init_app(app)
    app.register_blueprint(views.bp)
    return app
