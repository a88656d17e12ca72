"""Embedder adapters behind the Embedder port: MiniLM (ONNX Runtime, or torch), an OpenAI-compatible endpoint,
and the disabled one. service.container picks one from MEMORY_EMBEDDER."""
