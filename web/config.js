// Deployment settings of the pages. Locally the API is served on the same origin (apiBase "").
// On AWS the deploy step rewrites this file: see docs/web-pages.md, "Deploying the pages".
window.HOLDFAST_CONFIG = {
  apiBase: "",
  // "header": the customer types a name, sent as X-Customer-Id (local stack only).
  // "authorizer": the customer signs in through the user pool's hosted UI (code flow with PKCE);
  // the page sends the ID token in Authorization. signInDomain and clientId: the stack's outputs
  // SignInDomain and CustomerUserPoolClientId.
  identity: "header",
  signInDomain: "",
  clientId: "",
  // The operator page's sale metrics: on AWS the stack's SaleDashboardUrl output (the page links
  // it); empty locally, where the page reads them from the local stack's /_local/metrics.
  metricsDashboardUrl: "",
};
