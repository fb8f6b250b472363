import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [sveltekit()],
  // What the UI reads at build time: the API on the page's own origin (relative), the local (not cloud) build.
  define: {
    'import.meta.env.VITE_API': JSON.stringify(''),
    'import.meta.env.VITE_TEMPORAL_UI_BUILD_TARGET': JSON.stringify('local'),
    'import.meta.env.VITE_DARK_MODE': JSON.stringify(''),
  },
  // The UI's editor bundles are large by nature; the warning says nothing useful here.
  build: { chunkSizeWarningLimit: 5000, reportCompressedSize: false },
  logLevel: 'warn',
});
