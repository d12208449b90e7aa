import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The app is static: the worker is bundled as an ES module so it can import the engine.
export default defineConfig({
  plugins: [react()],
  worker: { format: 'es' },
  build: { target: 'es2022', outDir: 'dist' },
  server: { port: 5173 },
  preview: { port: 4173 },
});
