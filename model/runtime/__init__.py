"""What the server runs the network on: the serving protocol (context cache and canvas room in
numpy), its ONNX Runtime graph with int8 matmuls, and the torch fallback.
"""
