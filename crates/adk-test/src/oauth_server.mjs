// A real OAuth2 authorization server (npm's oauth2-mock-server: authorization code with PKCE,
// refresh, client credentials) and, beside it, the API its tokens open, for the OAuth2 tests.
//
// Usage: node oauth_server.mjs <oauth2-mock-server's folder> [<oauth port> <api port>]
// Prints one line, `ready <oauth port> <api port>`, once both listen on loopback (on free ports
// unless given: the `oauth_mail` example names fixed ones).
//
// The mock server keeps no record of the tokens it issues, so this script does: the API accepts
// only access tokens the server issued and that have not expired, and the token endpoint
// refuses (`invalid_grant`) a refresh token that was never issued, was used already, or was
// revoked through the API's `POST /control/revoke`. `GET /control/issued` lists every code and
// token the server handed out and the redirect URIs it sent users to, so that a test can look for
// them where they must not be (stored events, traces, logs).

import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const moduleDir = process.argv[2];
const { OAuth2Server } = await import(
  pathToFileURL(path.join(moduleDir, "node_modules/oauth2-mock-server/dist/index.mjs")).href
);

const server = new OAuth2Server();
await server.issuer.keys.generate("RS256");

const accessTokens = new Map(); // token -> expiry (ms since the epoch)
const refreshTokens = new Set();
const stats = { authorizationCode: 0, refreshToken: 0, clientCredentials: 0, refused: 0 };
const issued = { codes: [], accessTokens: [], refreshTokens: [], redirectUris: [] };

server.service.on("beforeAuthorizeRedirect", (redirect) => {
  const code = redirect.url.searchParams.get("code");
  if (code) {
    issued.codes.push(code);
  }
  issued.redirectUris.push(redirect.url.origin + redirect.url.pathname);
});

server.service.on("beforeResponse", (response, req) => {
  const body = req.body ?? {};
  if (body.grant_type === "refresh_token") {
    if (!refreshTokens.delete(body.refresh_token)) {
      stats.refused += 1;
      response.statusCode = 400;
      response.body = { error: "invalid_grant", error_description: "the refresh token is not valid" };
      return;
    }
    stats.refreshToken += 1;
  } else if (body.grant_type === "authorization_code") {
    stats.authorizationCode += 1;
  } else if (body.grant_type === "client_credentials") {
    stats.clientCredentials += 1;
  }
  accessTokens.set(response.body.access_token, Date.now() + response.body.expires_in * 1000);
  issued.accessTokens.push(response.body.access_token);
  if (response.body.refresh_token) {
    refreshTokens.add(response.body.refresh_token);
    issued.refreshTokens.push(response.body.refresh_token);
  }
});

const [oauthPortWanted = 0, apiPortWanted = 0] = process.argv.slice(3).map(Number);
await server.start(oauthPortWanted, "127.0.0.1");
const oauthPort = server.address().port;

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const api = http.createServer((req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (req.method === "POST" && url.pathname === "/control/revoke") {
    refreshTokens.clear();
    return json(res, 200, { revoked: true });
  }
  if (req.method === "GET" && url.pathname === "/control/stats") {
    return json(res, 200, stats);
  }
  if (req.method === "GET" && url.pathname === "/control/issued") {
    return json(res, 200, issued);
  }
  const auth = req.headers.authorization ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  const expiry = accessTokens.get(token);
  if (expiry === undefined || expiry < Date.now()) {
    res.writeHead(401, { "www-authenticate": "Bearer" });
    return res.end();
  }
  if (req.method === "GET" && url.pathname === "/inbox") {
    return json(res, 200, { messages: ["Lunch at noon?", "Your order shipped"] });
  }
  if (req.method === "GET" && url.pathname === "/reports") {
    return json(res, 200, { reports: 2 });
  }
  json(res, 404, { detail: "not found" });
});
api.listen(apiPortWanted, "127.0.0.1", () => {
  console.log(`ready ${oauthPort} ${api.address().port}`);
});
