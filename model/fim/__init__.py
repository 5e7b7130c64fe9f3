"""Fill-in-the-middle with a loaded model: the request, the denoised canvas, the lines the
next-token head writes, the candidates that need no network, and how each is calibrated
and ranked (``FimCompleter`` in ``inference.py``; its calibration in ``calibrate.py``
and ``calibrate_sources.py``).
"""
