# Wilson in a container: `docker compose up -d` (see compose.yaml), or
#   docker build -t wilson . && docker run -d -v wilson-data:/data -e WILSON_TELEGRAM_TOKEN=... wilson
# State (wilson.toml, the SQLite database, the calendar file) lives in the /data volume.

FROM python:3.11-slim AS build
WORKDIR /src
# every dependency at the version and hash in requirements/run.txt (`make lock`), in a venv the final
# image copies whole, so it needs no compiler and no build cache
COPY requirements/run.txt ./requirements/run.txt
RUN python -m venv /opt/wilson \
    && /opt/wilson/bin/pip install --no-cache-dir --require-hashes -r requirements/run.txt
COPY pyproject.toml setup.cfg README.md LICENSE ./
COPY wilson ./wilson
COPY actors ./actors
COPY channels ./channels
COPY storage ./storage
# Wilson itself: its dependencies are all in already, and so are the locked setuptools and wheel it builds with
RUN /opt/wilson/bin/pip install --no-cache-dir --no-deps --no-build-isolation .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH=/opt/wilson/bin:$PATH \
    WILSON_HOME=/data
COPY --from=build /opt/wilson /opt/wilson
RUN useradd --system --uid 10001 --user-group --home-dir /data --create-home --shell /usr/sbin/nologin wilson
# never root: a mistake in Wilson (or in a library it uses) cannot touch more than Wilson's own files
USER wilson
WORKDIR /data
VOLUME ["/data"]
# `wilson status` opens the database and reads the queues: it fails when Wilson's state is unusable
HEALTHCHECK --interval=60s --timeout=30s --start-period=60s --retries=3 CMD ["wilson", "status"]
# no terminal in a container: Wilson talks on Telegram (WILSON_TELEGRAM_TOKEN) and keeps working without it
CMD ["wilson", "run", "--no-terminal"]
