"""procure: compare vendor offers for B200 GPU hours by expected full cost per successful task."""

__version__ = "0.1.0"
