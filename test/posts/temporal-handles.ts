import type { PostsRuntime } from '../../src/posts/runtime';

/** `rt` whose Temporal client's `getHandle(id)` answers `handleOf(id)` where that gives a handle, the real one otherwise. */
export function withHandles(rt: PostsRuntime, handleOf: (workflowId: string) => object | undefined): PostsRuntime {
  const real = rt.temporal!;
  const bound = (target: object, key: string | symbol) => {
    const value = Reflect.get(target, key, target);
    return typeof value === 'function' ? value.bind(target) : value;
  };
  const workflow = new Proxy(real.workflow, {
    get: (target, key) => (key === 'getHandle' ? (id: string) => handleOf(id) ?? target.getHandle(id) : bound(target, key)),
  });
  return { ...rt, temporal: new Proxy(real, { get: (target, key) => (key === 'workflow' ? workflow : bound(target, key)) }) };
}
