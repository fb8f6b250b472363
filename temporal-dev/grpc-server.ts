// gRPC wiring: service definitions built by reflection from the proto bundle, each call decoded, dispatched to
// its handler, encoded; handler errors become gRPC statuses. Unknown RPCs answer UNIMPLEMENTED.
import { Server, ServerCredentials, status, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Engine } from './engine';
import { RpcError } from './errors';
import { operatorServiceHandlers } from './operator-service';
import { decode, encode, encodeAnswer, ownedCopy, serviceMethods } from './proto';
import type { PollContext } from './task-queues';
import { testServiceHandlers } from './test-service';
import { workflowServiceHandlers, type Handler } from './workflow-service';

function bindService(
  server: Server,
  engine: Engine,
  serviceName: string,
  handlers: Record<string, Handler>,
): void {
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: Record<string, any> = {};
  for (const [method, { requestType, responseType }] of Object.entries(serviceMethods(serviceName))) {
    definition[method] = {
      path: `/${serviceName}/${method}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (msg: object) => encode(requestType, msg),
      // Decoded bytes fields are views of the buffer given: a copy of exactly the request, in memory of its own,
      // keeps a payload stored for days (a waiting run's input) from holding on to a larger receive buffer or a
      // shared pool slab (see `ownedCopy`).
      requestDeserialize: (buf: Buffer) => decode(requestType, ownedCopy(buf)),
      responseSerialize: (msg: object) => encodeAnswer(responseType, msg),
      responseDeserialize: (buf: Buffer) => decode(responseType, buf),
    };
    const handler = handlers[method];
    implementation[method] = (call: any, callback: (err: unknown, res?: unknown) => void) => {
      if (!handler) {
        callback({ code: status.UNIMPLEMENTED, details: `${method} is not implemented by temporal-dev` });
        return;
      }
      const cancelListeners: Array<() => void> = [];
      const ctx: PollContext = {
        cancelled: () => call.cancelled === true,
        onCancel: (fn) => cancelListeners.push(fn),
      };
      call.on('cancelled', () => {
        for (const fn of cancelListeners.splice(0)) fn();
      });
      const reply = (err: unknown, res?: unknown) => {
        engine.scheduler.poke();
        if (err instanceof RpcError) callback(err.toServiceError());
        else if (err) callback({ code: status.INTERNAL, details: err instanceof Error ? err.message : String(err) });
        else callback(null, res);
      };
      try {
        const result = handler(call.request, ctx);
        if (result instanceof Promise) result.then((res) => reply(null, res), (err) => reply(err));
        else reply(null, result);
      } catch (err) {
        reply(err);
      }
    };
  }
  server.addService(definition as ServiceDefinition, implementation as UntypedServiceImplementation);
}

export async function listen(engine: Engine, host: string, port: number): Promise<{ server: Server; port: number }> {
  const server = new Server({ 'grpc.max_receive_message_length': 128 * 1024 * 1024, 'grpc.max_send_message_length': 128 * 1024 * 1024 });
  bindService(server, engine, 'temporal.api.workflowservice.v1.WorkflowService', workflowServiceHandlers(engine));
  bindService(server, engine, 'temporal.api.operatorservice.v1.OperatorService', operatorServiceHandlers(engine));
  if (engine.clock.timeSkipping) bindService(server, engine, 'temporal.api.testservice.v1.TestService', testServiceHandlers(engine));
  const boundPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return { server, port: boundPort };
}
