// The HTTP routes of Temporal's API, generated from the `google.api.http` annotations that @temporalio/proto keeps on
// every RPC (its `/api/v1/...` additional bindings), so the route table is the proto's and never written by hand.
// A template such as `/api/v1/namespaces/{namespace}/workflows/{execution.workflow_id}/history` becomes a matcher
// that fills the request's nested field `execution.workflowId` from the path.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('@temporalio/proto/protos/json-module');

export interface HttpRoute {
  service: string;
  method: string;
  requestType: string;
  responseType: string;
  verb: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  template: string;
  /** `*`: the JSON body is the request; undefined: the request comes from the path and the query string. */
  body?: string;
  match(path: string): Record<string, string> | null;
}

const VERBS = ['get', 'post', 'put', 'delete', 'patch'] as const;

function camelPath(fieldPath: string): string {
  return fieldPath
    .split('.')
    .map((part) => part.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()))
    .join('.');
}

function compile(template: string): (path: string) => Record<string, string> | null {
  const names: string[] = [];
  const pattern = template.replace(/\{([^}=]+)(?:=[^}]*)?\}|[.*+?^$()|[\]\\]/g, (m, name: string | undefined) => {
    if (!name) return `\\${m}`;
    names.push(camelPath(name));
    return '([^/]+)';
  });
  const re = new RegExp(`^${pattern}$`);
  return (path) => {
    const m = re.exec(path);
    if (!m) return null;
    const params: Record<string, string> = {};
    names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
    return params;
  };
}

function bindingsOf(method: any): Array<Record<string, string>> {
  const options = (method.parsedOptions ?? []).find((o: Record<string, unknown>) => o['(google.api.http)']);
  if (!options) return [];
  const http = options['(google.api.http)'];
  return [http, ...[].concat(http.additional_bindings ?? [])];
}

export function httpRoutes(serviceNames: readonly string[]): HttpRoute[] {
  const routes: HttpRoute[] = [];
  for (const service of serviceNames) {
    const svc = root.lookupService(service);
    for (const [method, m] of Object.entries<any>(svc.methods)) {
      m.resolve();
      for (const binding of bindingsOf(m)) {
        const verb = VERBS.find((v) => typeof binding[v] === 'string');
        const template = verb && binding[verb]!;
        if (!verb || !template?.startsWith('/api/v1/')) continue;
        routes.push({
          service,
          method,
          requestType: m.resolvedRequestType.fullName.slice(1),
          responseType: m.resolvedResponseType.fullName.slice(1),
          verb: verb.toUpperCase() as HttpRoute['verb'],
          template,
          body: binding.body,
          match: compile(template),
        });
      }
    }
  }
  // Literal segments win over parameters (`/workflows/{id}/history` before `/workflows/{id}` never clash, but
  // `/activities/{id}` and `/activity-count` style pairs are kept unambiguous by trying longer templates first).
  return routes.sort((a, b) => literalLength(b.template) - literalLength(a.template));
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]*\}/g, '').length;
}
