/**
 * The controller that runs several scalwsd instances on one host (`scalwsd controller`): its
 * configuration, the loop and its control operations (`Controller`), the control socket's API,
 * and how an instance is launched. It drives instances from outside through their admin API and
 * signals; it never reaches into a server.
 *
 * @module
 */

export { loadControllerConfig, parseCpuList } from "./config.ts";
export { createControlApp, serveControlSocket } from "./control_app.ts";
export { Controller } from "./controller.ts";
export { findExecutable, selfCommand } from "./launch.ts";
