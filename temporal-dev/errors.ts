// gRPC errors the way the Temporal frontend returns them: a status code, a message, and for some errors a typed
// detail in `grpc-status-details-bin` that the SDK decodes (e.g. NamespaceNotFoundFailure).
import { Metadata, status } from '@grpc/grpc-js';
import { encode, packAny, type Msg } from './proto';

export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
    readonly detail?: { type: string; value: Msg },
  ) {
    super(message);
  }

  toServiceError(): { code: status; details: string; metadata: Metadata } {
    const metadata = new Metadata();
    if (this.detail) {
      const statusProto = {
        code: this.code,
        message: this.message,
        details: [packAny(this.detail.type, this.detail.value)],
      };
      metadata.set('grpc-status-details-bin', encode('google.rpc.Status', statusProto));
    }
    return { code: this.code, details: this.message, metadata };
  }
}

export const notFound = (message: string) =>
  new RpcError(status.NOT_FOUND, message, { type: 'temporal.api.errordetails.v1.NotFoundFailure', value: {} });
export const invalidArgument = (message: string) => new RpcError(status.INVALID_ARGUMENT, message);
export const failedPrecondition = (message: string) => new RpcError(status.FAILED_PRECONDITION, message);
export const unimplemented = (message: string) => new RpcError(status.UNIMPLEMENTED, message);
export const namespaceNotFound = (namespace: string) =>
  new RpcError(status.NOT_FOUND, `Namespace ${namespace} is not found.`, {
    type: 'temporal.api.errordetails.v1.NamespaceNotFoundFailure',
    value: { namespace },
  });
export const workflowAlreadyStarted = (workflowId: string, startRequestId: string, runId: string) =>
  new RpcError(status.ALREADY_EXISTS, `Workflow execution is already running. WorkflowId: ${workflowId}, RunId: ${runId}.`, {
    type: 'temporal.api.errordetails.v1.WorkflowExecutionAlreadyStartedFailure',
    value: { startRequestId, runId },
  });
export const workflowCompleted = () => notFound('workflow execution already completed');
