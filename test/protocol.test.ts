import { describe, expect, it } from 'vitest';
import { compileSchema, ProtocolRegistry } from '../kernel/index.js';
import { ErrorCodes, PROTOCOL_VERSION, ProtocolError } from '../sdk/index.js';
import { errorShape, parseFrame, protocolErrorShape, validateConnectParams } from '../plugins/gateway/frames.js';
import { KERNEL_CONFIG_SCHEMA } from '../kernel/generated/schemas.js';
import { useValidatorStore } from '../kernel/validation.js';
import { validatorCache, validatorKey } from '../host/validator-cache.js';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

describe('wire frames', () => {
  it('accepts the three frame shapes', () => {
    expect(parseFrame(JSON.stringify({ type: 'req', id: '1', method: 'health', params: {} }))).toEqual({
      ok: true,
      frame: { type: 'req', id: '1', method: 'health', params: {} },
    });
    expect(
      parseFrame(
        '{"type":"res","id":"1","ok":false,"error":{"code":"UNAVAILABLE","message":"later","retryable":true,"retryAfterMs":500}}',
      ).ok,
    ).toBe(true);
    expect(parseFrame('{"type":"event","event":"tick","payload":{"ts":1},"seq":3}').ok).toBe(true);
  });

  it('rejects malformed frames with INVALID_REQUEST and a reason naming what was wrong', () => {
    const reason = (text: string) => {
      const result = parseFrame(text);
      if (result.ok) throw new Error('expected a rejection');
      expect(result.error.code).toBe(ErrorCodes.INVALID_REQUEST);
      return result.error.message;
    };
    expect(reason('{not json')).toMatch(/^frame is not valid JSON: /);
    expect(reason('"just a string"')).toBe('frame "type" must be "req", "res" or "event"');
    expect(reason('{"type":"rpc"}')).toBe('frame "type" must be "req", "res" or "event"');
    expect(reason('{"type":"req","id":"1"}')).toBe('invalid req frame: method: is required');
    expect(reason('{"type":"req","id":"","method":"x"}')).toBe(
      'invalid req frame: id: must NOT have fewer than 1 characters',
    );
    expect(reason('{"type":"req","id":"1","method":"x","extra":1}')).toBe(
      'invalid req frame: extra: is not a known key',
    );
    expect(reason('{"type":"res","id":"1","ok":"yes"}')).toBe('invalid res frame: ok: must be boolean');
    expect(reason('{"type":"event","event":"tick","seq":-1}')).toBe('invalid event frame: seq: must be >= 0');
  });

  it('validates connect params', () => {
    expect(validateConnectParams({ minProtocol: 3, maxProtocol: PROTOCOL_VERSION, client: { id: 'cli' } }).ok).toBe(
      true,
    );
    const bad = validateConnectParams({ minProtocol: '3', client: {} });
    expect(bad).toEqual({
      ok: false,
      issues: [
        { path: 'maxProtocol', message: 'is required' },
        { path: 'minProtocol', message: 'must be integer' },
        { path: 'client.id', message: 'is required' },
      ],
    });
  });

  it('uses validators compiled once (the kernel schemas are precompiled)', () => {
    expect(compileSchema(KERNEL_CONFIG_SCHEMA)).toBe(compileSchema(KERNEL_CONFIG_SCHEMA));
    const plugin = { type: 'object', properties: { n: { type: 'number' } } };
    expect(compileSchema(plugin)).toBe(compileSchema(plugin));
    // Same content, different object: still one compile.
    expect(compileSchema({ ...plugin })).toBe(compileSchema(plugin));
  });
});

describe('validator cache', () => {
  it('keeps compiled plugin validators on disk, usable from any directory', () => {
    const dir = tempDir('claw-vcache-');
    useValidatorStore(validatorCache(dir));
    try {
      const schema = {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 2 },
          size: { type: 'integer', default: 3 },
          [`k${Date.now()}`]: {},
        },
      };
      compileSchema(schema);
      const file = join(dir, `${validatorKey(schema)}.cjs`);
      expect(existsSync(file)).toBe(true);
      const cached = createRequire(import.meta.url)(file) as ((data: unknown) => boolean) & { errors?: unknown[] };
      const data: Record<string, unknown> = { name: 'ok' };
      expect(cached(data)).toBe(true);
      expect(data).toEqual({ name: 'ok', size: 3 });
      expect(cached({ name: 'x' })).toBe(false);
      expect(cached.errors).toEqual([expect.objectContaining({ keyword: 'minLength', instancePath: '/name' })]);
    } finally {
      useValidatorStore(undefined);
    }
  });
});

describe('protocol registry', () => {
  it('registers methods and events with their schemas', () => {
    const registry = new ProtocolRegistry();
    registry.registerMethod('health', 'gateway', { scope: 'operator.read' });
    registry.registerMethod('config.set', 'gateway', {
      scope: 'operator.admin',
      sideEffect: true,
      params: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
    });
    registry.registerEvent('tick', 'gateway', { description: 'keepalive' });
    registry.registerEvent('chat.delta', 'agent-loop', { droppable: true });
    expect(registry.methodNames()).toEqual(['config.set', 'health']);
    expect(registry.eventNames()).toEqual(['chat.delta', 'tick']);
    expect(registry.validateParams('health', undefined)).toEqual({ ok: true, value: undefined });
    expect(registry.validateParams('config.set', { path: 'a' }).ok).toBe(true);
    expect(registry.validateParams('config.set', {})).toEqual({
      ok: false,
      issues: [{ path: 'params.path', message: 'is required' }],
    });
    expect(registry.validateParams('nope', {})).toEqual({
      ok: false,
      issues: [{ path: 'method', message: 'unknown method "nope"' }],
    });
    expect(registry.event('chat.delta')).toMatchObject({ droppable: true, owner: 'agent-loop' });
  });

  it('refuses a method owned by another plugin, and forgets an owner on unload', () => {
    const registry = new ProtocolRegistry();
    registry.declareMethod('sessions.list', 'sessions');
    expect(() => registry.registerMethod('sessions.list', 'intruder')).toThrow(
      'gateway method "sessions.list" is already provided by "sessions"',
    );
    registry.registerMethod('sessions.list', 'sessions', {});
    expect(() => registry.registerMethod('sessions.list', 'sessions', {})).toThrow('already registered');
    registry.unregisterOwner('sessions');
    expect(registry.method('sessions.list')).toMatchObject({ registered: false, owner: 'sessions' });
  });

  it('shapes errors as {code, message, details?, retryable?, retryAfterMs?}', () => {
    expect(errorShape('NOT_PAIRED', 'pair first')).toEqual({ code: 'NOT_PAIRED', message: 'pair first' });
    expect(protocolErrorShape(new ProtocolError('UNAVAILABLE', 'busy', { reason: 'startup' }, true, 250))).toEqual({
      code: 'UNAVAILABLE',
      message: 'busy',
      details: { reason: 'startup' },
      retryable: true,
      retryAfterMs: 250,
    });
  });
});
