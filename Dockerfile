# syntax=docker/dockerfile:1
# The billing engine's container image: compiled in a build stage, run as plain JavaScript
# (node dist/main.js) under tini as PID 1, as the unprivileged `node` user, with its SQLite
# database in the /data volume. For PostgreSQL set DATABASE_URL (see compose.yaml).
# Build: docker build -t billing-engine .
# Run:   docker run -p 8080:8080 -v billing-data:/data billing-engine
# CLI:   docker run --rm -v billing-data:/data billing-engine billing audit

# --- build: every dependency (the build tools are devDependencies), then tsc to dist/ and the web console (Vite)
#     to console/dist/
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
# The console bundles the repository's API client from its sources.
COPY sdk/typescript/src ./sdk/typescript/src
RUN npm run build

# --- production dependencies only: what dist/ imports, no compiler, bundler or console library
#     (better-sqlite3 is native: built here, on the runtime's base image)
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime: those dependencies, the compiled server and the built console
FROM node:20-bookworm-slim
# tini forwards SIGTERM to node and reaps zombies (the server drains and exits 0 on SIGTERM).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=8080 \
  DATABASE_URL=sqlite:/data/billing.sqlite
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY package.json LICENSE ./
RUN chmod +x dist/cli/main.js \
  && ln -s /app/dist/cli/main.js /usr/local/bin/billing \
  && mkdir -p /data \
  && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "-e", \
  "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(+!r.ok),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
