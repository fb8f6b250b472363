/** The accounts feature: connect, list, update, disconnect; credentials sealed at rest; the context activities use. */
export { ConnectAccountBody, UpdateAccountBody, type ConnectAccountRequest, type UpdateAccountRequest } from './connect-request';
export { openCredentials, sealCredentials, platformContextOf } from './credentials';
export { type AccountLifecycle, type AccountInactiveReason, markConnectionLost } from './lifecycle';
export { AccountNotConnectedError, loadPlatformContext } from './platform-context';
export { slotReleasingReasons, holdsSlot } from './repository';
export { type AccountsDeps, connectAccount, disconnectAccount, getAccount, listAccounts, updateAccount } from './service';
export { AccountSchema, type AccountView, toAccountView, inactiveReasons } from './view';
