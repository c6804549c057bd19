// Draws the page's Mermaid diagrams; a file of its own because the console's CSP runs no inline script.
mermaid.initialize({startOnLoad: true, securityLevel: 'strict'});
