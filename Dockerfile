# The one Parley image: the parley binary (every role: up, referee, analytics, gateway, agent,
# tournament, admin, health, agent-check), the Go example bot, and what the example bots in
# Python and TypeScript need to run.
# docker-compose.yml runs every service from it. Build: docker build -t parley .

# --- the Go binary: static, so the runtime image needs no Go toolchain.
FROM golang:1.26-bookworm AS go-build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/parley ./cmd/parley \
	&& CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/parley-example-go ./agents/sdk/example

# --- the TypeScript SDK and example bot, compiled; runtime packages only.
FROM node:20-bookworm-slim AS ts-build
WORKDIR /src/agents/typescript
COPY agents/typescript/package.json agents/typescript/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY agents/typescript/ ./
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: Debian's Python gRPC packages (the Python SDK uses nothing from PyPI) and node.
FROM debian:12-slim
RUN apt-get update \
	&& apt-get install -y --no-install-recommends python3 python3-grpcio python3-protobuf ca-certificates \
	&& rm -rf /var/lib/apt/lists/* \
	&& useradd --system --uid 10001 --home-dir /data --no-create-home parley \
	&& mkdir -p /data \
	&& chown parley:parley /data
COPY --from=ts-build /usr/local/bin/node /usr/local/bin/node
COPY --from=go-build /out/parley /out/parley-example-go /usr/local/bin/
WORKDIR /opt/parley
COPY gen/python gen/python
COPY agents/python agents/python
COPY --from=ts-build /src/agents/typescript/package.json agents/typescript/package.json
COPY --from=ts-build /src/agents/typescript/node_modules agents/typescript/node_modules
COPY --from=ts-build /src/agents/typescript/dist agents/typescript/dist
USER parley
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s CMD ["parley", "health", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["parley"]
CMD ["up", "--data-dir", "/data", "--listen", "0.0.0.0:8080"]
