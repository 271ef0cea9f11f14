# The race server. Built by docker-compose.yml, which runs it next to Redis;
# on its own: docker build -t solitaire-race . && docker run -p 8765:8765 solitaire-race
# (without REDIS_URL it starts its embedded Redis, persisting to DATA_DIR).
#
# Two stages: the full Python image has the C compiler that setup.py needs to build the
# Scorpion search's C core (a tenth of the speed without it), and makes a wheel of the
# package and of each dependency, at the versions requirements.lock pins; the slim one
# installs those wheels alone, without a compiler or a package index.
# tests/nodes/test_compose.py builds the wheel from exactly what the first stage copies.
FROM python:3.11 AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# Only what the package needs: the build context also holds a virtualenv and tests.
COPY pyproject.toml setup.py README.md requirements.lock ./
COPY server ./server
COPY protocol ./protocol
COPY client ./client
# The server and its embedded store: no terminal client, no test tools.
RUN pip wheel --wheel-dir /wheels --constraint requirements.lock '.[server,embedded]'

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

COPY --from=build /wheels /wheels
RUN pip install --no-index --find-links /wheels 'solitaire-race[server,embedded]' \
    && rm -r /wheels \
    && useradd --system --no-create-home race \
    && mkdir /data \
    && chown race /data

WORKDIR /data
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
