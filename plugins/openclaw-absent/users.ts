/**
 * OpenClaw's user profiles (users.*), answered as an OpenClaw gateway answers a connection with
 * no signed-in user — which every claw connection is: claw authenticates connections (token,
 * password, paired device), not people. Lists are empty, preferences report
 * "no_durable_identity" (OpenClaw's own answer, telling the Control UI to keep them in the
 * browser), and anything about the caller's own profile is refused naming why.
 */
import { ErrorCodes, ProtocolError, type PluginApi, registerMethodTable, type MethodEntry } from '../../sdk/index.js';

function noProfile(scope: string, description: string): MethodEntry {
  return {
    scope,
    description,
    handler: (_params, _ctx, method) => {
      throw new ProtocolError(
        ErrorCodes.FORBIDDEN,
        `${method} requires an authenticated user: claw has no user profiles (connections sign in with the gateway token, password or a paired device)`,
      );
    },
  };
}

export function registerUserMethods(api: PluginApi): void {
  registerMethodTable(api, {
    'users.list': {
      scope: 'operator.read',
      description: 'User profiles: none, as claw has no users.',
      handler: () => ({ profiles: [] }),
    },
    'users.mentionable': {
      scope: 'operator.read',
      description: 'People who can be @mentioned: none.',
      handler: () => ({ users: [], truncated: false }),
    },
    'users.prefs.get': {
      scope: 'operator.read',
      description: 'Per-user preferences: no durable identity, so clients keep them locally.',
      handler: () => ({ status: 'no_durable_identity' }),
    },
    'users.prefs.set': {
      scope: 'operator.write',
      description: 'Per-user preferences: no durable identity, so nothing is stored (clients keep them locally).',
      handler: () => ({ status: 'no_durable_identity' }),
    },
    'users.self': noProfile('operator.read', "The caller's own profile."),
    'users.setDisplayName': noProfile('operator.write', "Change the caller's display name."),
    'users.setAvatar': noProfile('operator.write', "Change the caller's avatar."),
    'users.linkEmail': noProfile('operator.admin', 'Link an email address to a profile.'),
    'users.github.status': noProfile('operator.read', "The caller's GitHub connection."),
    'users.github.disconnect': noProfile('operator.read', "Disconnect the caller's GitHub account."),
    'users.listModelAccounts': noProfile('operator.read', "Model provider accounts linked to the caller's profile."),
    'users.selectModelAccount': noProfile('operator.write', 'Choose the model account the caller uses.'),
    'users.linkAuthProfile': noProfile('operator.admin', 'Link a model auth profile to a user.'),
    'users.unlinkAuthProfile': noProfile('operator.write', 'Unlink a model auth profile from a user.'),
    'users.authConnect.catalog': noProfile('operator.write', 'Providers a user can sign in to.'),
    'users.authConnect.start': noProfile('operator.write', 'Start signing a user in to a provider.'),
    'users.authConnect.answer': noProfile('operator.write', 'Answer a provider sign-in step.'),
    'users.authConnect.status': noProfile('operator.write', 'Status of a provider sign-in.'),
    'users.authConnect.cancel': noProfile('operator.write', 'Cancel a provider sign-in.'),
  });
}
