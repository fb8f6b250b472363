# Herald for production-like runs (see docker-compose.yml). PostgreSQL and Temporal come from outside:
# DATABASE_URL and TEMPORAL_ADDRESS must be set, and HERALD_ENCRYPTION_KEY (NODE_ENV=production).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/bin ./bin
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Two glibc malloc arenas instead of one per thread (sdk-core's, libuv's, V8's): see README "Memory" (issue 15).
ENV MALLOC_ARENA_MAX=2
CMD ["node", "dist/src/main.js"]
