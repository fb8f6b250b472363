/** The accounts feature: connect, list, update, disconnect; credentials sealed at rest; the context activities use. */
export { ConnectAccountBody, UpdateAccountBody } from './connect-request';
export { openCredentials } from './credentials';
export { type AccountLifecycle, type AccountInactiveReason, markConnectionLost } from './lifecycle';
export { AccountNotConnectedError, loadPlatformContext } from './platform-context';
export { type AccountsDeps, answerMadeConnection, connectAccount, disconnectAccount, getAccount, listAccounts, type MadeConnection, updateAccount } from './service';
export { AccountSchema, toAccountView } from './view';
