# lead-gateway: built with the same `npm ci && npm run build` as CI, run as a non-root user with only the
# production dependencies. test/artefacts.test.ts checks this file (docs/operations/deployment.md, "The container image").
# The base image is pinned to a Node.js release; move it with the upgrade notes in docs/operations/upgrades.md.
FROM node:22.21.1-bookworm-slim AS toolchain
WORKDIR /app
# better-sqlite3 compiles SQLite from source where no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./

FROM toolchain AS build
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM toolchain AS production-dependencies
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:22.21.1-bookworm-slim
# No DATABASE_PATH here: the default data/lead-gateway.db is /data through the link below, and an
# image that set it would refuse a DATABASE_URL given beside it (two databases are never a guess).
# No secret either: ADMIN_TOKEN, CONSOLE_SECRET and DATABASE_URL come at run time, best as files
# (ADMIN_TOKEN_FILE=/run/secrets/admin_token, docs/operations/configuration.md "Secrets from files").
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 RULES_DIR=/app/rules
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY rules ./rules
COPY docs ./docs
# On SQLite, mount a volume at /data (docker run -v lg-data:/data); on PostgreSQL nothing is written
# here, so the image declares no VOLUME that would leave an unused anonymous volume per container.
RUN mkdir -p /data && chown node:node /data && ln -s /data /app/data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
