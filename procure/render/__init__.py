"""Renderers: every output is drawn from the Evaluation; none recomputes a figure."""
