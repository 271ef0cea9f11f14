# The race server. Built by docker-compose.yml, which runs it next to Redis;
# on its own: docker build -t solitaire-race . && docker run -p 8765:8765 solitaire-race
# (without REDIS_URL it starts its embedded Redis, persisting to DATA_DIR).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Only what the package needs: the build context also holds a virtualenv and tests.
COPY pyproject.toml README.md ./
COPY server ./server
COPY protocol ./protocol
COPY client ./client
RUN pip install . \
    && useradd --system --no-create-home race \
    && mkdir /data \
    && chown race /data

USER race
# Every setting is an environment variable (see server/config.py); these are the
# container's defaults: listen on all interfaces, embedded-Redis data in /data.
ENV HOST=0.0.0.0 \
    PORT=8765 \
    DATA_DIR=/data
EXPOSE 8765
# HOST comes from the environment rather than a --host flag, because flags win over
# the environment and would make HOST impossible to change.
CMD ["python", "-m", "server"]
