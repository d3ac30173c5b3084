// Plain ESM so `next start` needs no TypeScript at run time (the Docker image prunes dev dependencies).
// /api/* is proxied by app/api/[...path]/route.ts, which reads BACKEND_URL at request time, not at build.

/** @type {import('next').NextConfig} */
const config = {
  reactStrictMode: true,
  poweredByHeader: false,
};

export default config;
