// Deployment settings of the pages. Locally the API is served on the same origin (apiBase "").
// On AWS the deploy step rewrites this file: see docs/web-pages.md, "Deploying the pages".
window.HOLDFAST_CONFIG = {
  apiBase: "",
  // "header": the customer types a name, sent as X-Customer-Id (local stack only).
  // "authorizer": the customer signs in; the page sends the sign-in's ID token in Authorization.
  identity: "header",
  signInUrl: "",
  // The operator page's sale metrics: on AWS the stack's SaleDashboardUrl output (the page links
  // it); empty locally, where the page reads them from the local stack's /_local/metrics.
  metricsDashboardUrl: "",
};
