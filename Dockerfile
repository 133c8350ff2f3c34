# syntax=docker/dockerfile:1
# model-gateway container image.
#   docker build -t model-gateway:dev --build-arg VERSION=$(node -p 'require("./package.json").version') .
# Three stages: `build` compiles TypeScript with dev dependencies, `deps` installs production dependencies only,
# `runtime` is distroless (no shell, no package manager) and runs as the distroless `nonroot` user (65532).
# Nothing is written to the root filesystem at run time, so it runs with readOnlyRootFilesystem: true.

# Debian 12 (bookworm) in the build stages matches the distroless debian12 runtime (same glibc).
ARG NODE_BUILD_IMAGE=node:24-bookworm-slim
ARG NODE_RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

FROM ${NODE_BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_BUILD_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_RUNTIME_IMAGE} AS runtime
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="model-gateway" \
      org.opencontainers.image.description="Kubernetes-native, OpenAI-compatible model gateway" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
WORKDIR /app
ENV NODE_ENV=production
# Two glibc malloc arenas instead of up to eight per core: the memory the serving thread, libuv's pool and V8's
# helper threads free goes back to fewer, less fragmented arenas: lower RSS after a load at no measurable CPU
# (bench/results/2026-11-25-allocation-and-arenas.md). The benchmark starts its gateway with the same environment
# (bench/lib/targets.ts).
ENV MALLOC_ARENA_MAX=2
# A fixed mmap threshold: blocks of 64 KiB and more (bodies, socket buffers) are mapped and unmapped on their own
# instead of glibc raising its threshold to the largest block freed (5 MB after one upload) and keeping them in
# fragmented arenas: lower RSS after a load and with many open streams, for a little more CPU on large bodies
# (bench/results/2026-11-27-night-mmap-threshold.md).
ENV MALLOC_MMAP_THRESHOLD_=65536
# package.json is needed at run time: it carries "type": "module", which makes dist/*.js ES modules.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER 65532:65532
EXPOSE 8080 9090
# Docker-only health check (Kubernetes uses the chart's probes); exec form because there is no shell.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.MG_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM directly, which starts the gateway's graceful drain.
# --expose-gc: lets the gateway ask V8 for a memory-reducing GC once the config has been quiet after a compile,
# which returns the empty heap pages a compile of 10k tokens leaves behind (src/runtime/memory-release.ts); with it
# the idle RSS is the same as with a capped young generation, so V8's default young generation is kept (cheaper
# per request, lower RSS after load: docs/performance.md). The chart's gateway.youngGenerationSemiSpaceMB caps it
# by repeating this entry point as the container's command with --max-semi-space-size added.
ENTRYPOINT ["/nodejs/bin/node", "--expose-gc", "dist/cli.js", "serve"]
