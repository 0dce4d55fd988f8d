"""Shopping-cart pricing helpers."""
