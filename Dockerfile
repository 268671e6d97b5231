# lead-gateway: build with the same `npm ci && npm run build` as CI, run as a non-root user.
FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
# No DATABASE_PATH here: the default data/lead-gateway.db is /data through the link below, and an
# image that set it would refuse a DATABASE_URL given beside it (two databases are never a guess).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 RULES_DIR=/app/rules
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY rules ./rules
COPY docs ./docs
RUN mkdir -p /data && chown node:node /data && ln -s /data /app/data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# ADMIN_TOKEN must be set (docker run -e ADMIN_TOKEN=...); mount your rules over /app/rules.
CMD ["node", "dist/main.js"]
