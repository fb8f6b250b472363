// A single-page app (no server rendering): the Temporal Web UI calls the HTTP API on its own origin.
import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess(),
  kit: {
    adapter: adapter({ pages: 'build', assets: 'build', fallback: 'index.html', strict: false }),
    // The UI's own routes never change between builds of the same version; a stale tab must not reload itself.
    version: { pollInterval: 0 },
  },
};
