// The Temporal UI components are styled with Tailwind classes and the UI's own theme plugin (by path: the
// package exports it for `import` only, and Tailwind loads its config with `require`).
import temporal, { textStyles } from './node_modules/@temporalio/ui/dist/theme/plugin.js';

export default {
  content: ['./src/**/*.{html,js,svelte,ts}', './node_modules/@temporalio/ui/dist/**/*.{html,js,svelte,ts}'],
  darkMode: ['selector', '[data-theme="dark"]'],
  theme: {
    extend: { zIndex: { 100: '100' } },
  },
  plugins: [temporal, textStyles],
};
