"""The layer classes of `irflow.nn`, one module per family as in Paddle."""
