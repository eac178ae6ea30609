"""The neutral core every layer stands on: the error hierarchy and the PadHit value.

hardware/, companion/ and web/ all import from here; this package imports
nothing of theirs (tests/test_layers.py checks it), so the hardware seam can be
used without the service and the web without the hardware.
"""
