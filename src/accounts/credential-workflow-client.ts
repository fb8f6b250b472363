import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import type { Logger } from '../logger';
import type { KeepCredentialAliveInput } from '../../workflows/keep-credential-alive';

/**
 * How the API and the reconciler reach an account's credential workflow (`workflows/keep-credential-alive.ts`), id
 * `credential-<accountId>`: signal-with-start, so a running one re-reads the row now (a reconnect stored a new token)
 * and a missing one is started. An account whose credential nothing can renew gets one that waits for its end and then
 * loses the connection.
 */

export const credentialWorkflowId = (accountId: string) => `credential-${accountId}`;

export interface CredentialKeeper {
  /** A credential was stored for the account (connected, reconnected): make sure its workflow runs and re-reads it. */
  credentialStored(accountId: string): Promise<void>;
}

export function createCredentialKeeper(temporal: Client, taskQueue: string): CredentialKeeper {
  return {
    async credentialStored(accountId) {
      const input: KeepCredentialAliveInput = { accountId };
      await temporal.workflow.signalWithStart('keepCredentialAlive', {
        workflowId: credentialWorkflowId(accountId),
        taskQueue,
        args: [input],
        signal: 'credentialChanged',
        signalArgs: [],
      });
    },
  };
}

/**
 * At start (an embedded, memory-only Temporal forgets every workflow): every active or switched-off account whose
 * credential ends gets its workflow again, as every scheduled post gets its own; for a switched-off one whose token
 * does not renew itself it stops at its first read (`planCredentialRenewal`, the one place that decides).
 */
export async function reconcileCredentialWorkflows(
  db: Db,
  keeper: CredentialKeeper,
  logger: Logger,
  signal?: AbortSignal,
): Promise<{ checked: number; started: number }> {
  const accounts = await db
    .selectFrom('accounts')
    .select('id')
    .where((eb) => eb.or([eb('active', '=', true), eb('inactive_reason', 'in', ['deactivated', 'reauthorization_required'])]))
    .where('credential_expires_at', 'is not', null)
    .where('credentials_sealed', 'is not', null)
    .execute();
  let started = 0;
  for (const { id } of accounts) {
    // Stopping: the workflow being started is let finish, no further one is started through a closing client.
    if (signal?.aborted) break;
    try {
      await keeper.credentialStored(id);
      started += 1;
    } catch (err) {
      logger.error({ err, accountId: id }, 'reconcile: could not start a credential workflow');
    }
  }
  return { checked: accounts.length, started };
}
