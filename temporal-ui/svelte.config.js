// A single-page app (no server rendering): the Temporal Web UI calls the HTTP API on its own origin.
import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

const out = process.env.HERALD_UI_OUT || 'build';

export default {
  preprocess: vitePreprocess(),
  kit: {
    // HERALD_UI_OUT: Herald builds into a fresh directory and swaps it in (src/temporal/web-ui.ts).
    adapter: adapter({ pages: out, assets: out, fallback: 'index.html', strict: false }),
    // The UI's own routes never change between builds of the same version; a stale tab must not reload itself.
    version: { pollInterval: 0 },
  },
};
