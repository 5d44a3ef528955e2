// A generic gRPC client of odin serve, as grpcurl or a Kubernetes probe
// would be: it knows no .proto of Odin's. It uses the npm packages pinned in
// scripts/install-language-servers.sh: @grpc/grpc-js, grpc-health-check
// (the standard health service's definition) and grpc-js-reflection-client
// (server reflection). It prints what it saw as one JSON object on a line
// of its own, after "RESULT ", for tests/odin_daemon_test.cc.
//
// usage: node generic_client.mjs NODE_MODULES ADDRESS TOKEN
import { createRequire } from "node:module";

const [modules, address, token] = process.argv.slice(2);
const require = createRequire(`${modules}/`);
const grpc = require("@grpc/grpc-js");
const health = require("grpc-health-check");
const { GrpcReflection } = require("grpc-js-reflection-client");

const credentials = grpc.credentials.createInsecure();
const seen = {};
// A daemon that never answers fails the test, not hangs it.
setTimeout(() => {
  console.log("RESULT " + JSON.stringify({ ...seen, timedOut: true }));
  process.exit(3);
}, 60000).unref();

function bearer(value) {
  const md = new grpc.Metadata();
  if (value) md.set("authorization", `Bearer ${value}`);
  return md;
}

async function outcome(promise) {
  try {
    return { ok: await promise };
  } catch (e) {
    return { code: e?.code ?? null, error: e?.details ?? e?.message ?? String(e) };
  }
}

// Health, with no token.
const Health = grpc.makeGenericClientConstructor(health.service, "Health");
const healthClient = new Health(address, credentials);
seen.health = await outcome(new Promise((resolve, reject) => {
  healthClient.check({ service: "" }, (err, reply) => (err ? reject(err) : resolve(reply.status)));
}));
healthClient.close();

// Reflection: refused without the token, answered with it.
const reflection = new GrpcReflection(address, credentials);
seen.servicesWithoutToken = await outcome(reflection.listServices("*", bearer("")));
seen.servicesWrongToken = await outcome(reflection.listServices("*", bearer("not-the-token")));
seen.services = await outcome(reflection.listServices("*", bearer(token)));

// A call made from the descriptors reflection gave: ListSessions.
const descriptor = await outcome(reflection.getDescriptorBySymbol("odin.v1.CoordinatorService", bearer(token)));
if (descriptor.ok) {
  const pkg = descriptor.ok.getPackageObject({ keepCase: true, longs: String, enums: String, defaults: true });
  const Service = pkg.odin.v1.CoordinatorService;
  const client = new Service(address, credentials);
  const call = (md) => new Promise((resolve, reject) => {
    client.ListSessions({}, md, (err, reply) => (err ? reject(err) : resolve(reply)));
  });
  seen.listSessions = await outcome(call(bearer(token)));
  seen.listSessionsWithoutToken = await outcome(call(bearer("")));
  client.close();
} else {
  seen.descriptor = descriptor;
}
console.log("RESULT " + JSON.stringify(seen));
process.exit(0);
