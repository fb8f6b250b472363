import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [sveltekit()],
  // The UI's editor bundles are large by nature; the warning says nothing useful here.
  build: { chunkSizeWarningLimit: 5000, reportCompressedSize: false },
  logLevel: 'warn',
});
