// Plain ESM so `next start` needs no TypeScript at run time (the Docker image prunes dev dependencies).
// /api/* is proxied by app/api/[...path]/route.ts, which reads BACKEND_URL at request time, not at build.

/** @type {import('next').NextConfig} */
const config = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The build type-checks the app only: a type error in a test fails ./scripts/test (tsc --noEmit over
  // tsconfig.json), not the UI that ./scripts/start builds.
  typescript: { tsconfigPath: "tsconfig.build.json" },
};

export default config;
