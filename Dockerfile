# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the full toolchain.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npx tsc -p tsconfig.json
# The web UI (served at /ui/): compiled to dist/web with the yaml parser's browser build.
COPY ui ./ui
COPY scripts/build-ui.mjs ./scripts/
RUN npm run build:ui

# Runtime stage: production dependencies and compiled code only, as a non-root user.
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8443 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/web ./dist/web
COPY migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8443
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/src/cli/healthcheck.js"]
CMD ["node", "dist/src/server.js"]
