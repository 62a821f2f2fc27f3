# syntax=docker/dockerfile:1
# The Node.js version is pinned here, once: CI (.ci/run) reads this line and runs the whole
# test suite on this same version, beside Node 20, 22 and 24. Node 26 is the current LTS
# (since 2026-10-28); its official images are built on Debian 13 (trixie).
ARG NODE_VERSION=26.10.0

# Build stage: compile TypeScript with the full toolchain.
FROM node:${NODE_VERSION}-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds, and the sources are not copied yet.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
COPY scripts/pglite-image.ts scripts/bundle-server.mjs ./scripts/
RUN npx tsc -p tsconfig.json && chmod 755 dist/src/cli/admin.js
# The server bundled, as `npm start` runs it (scripts/bundle-server.mjs); dist/src keeps the CLI.
RUN node scripts/bundle-server.mjs
# A new DATA_DIR's embedded database, initialised and migrated here once (src/db/pglite-image.ts).
COPY migrations ./migrations
RUN node dist/scripts/pglite-image.js
# The web UI (served at /ui/): compiled to dist/web with the yaml parser's browser build.
COPY ui ./ui
COPY scripts/build-ui.mjs ./scripts/
RUN npm run build:ui

# Runtime stage: production dependencies and compiled code only, as a non-root user.
FROM node:${NODE_VERSION}-trixie-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8443 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/server ./dist/server
COPY --from=build /app/dist/web ./dist/web
COPY --from=build /app/dist/pglite-image ./dist/pglite-image
COPY migrations ./migrations
# /data holds the database (and, by default, the generated certificate and encryption key);
# /secrets is where ENCRYPTION_KEY_FILE can keep the key apart from the data it protects.
RUN mkdir -p /data /secrets && chown node:node /data /secrets && chmod 0700 /secrets
USER node
VOLUME ["/data"]
EXPOSE 8443
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/src/cli/healthcheck.js"]
CMD ["node", "--enable-source-maps", "dist/server/server.js"]
