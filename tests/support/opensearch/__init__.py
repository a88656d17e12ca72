"""A real single-node OpenSearch for the tests, built from Maven Central artifacts only (no Docker, no other site).

Callers use the facade tests/support/opensearch_node.py (start_node, Node, build, VERSION, …) and its CLI:

    python -m tests.support.opensearch_node build     # fetch + lay out once (cached), print where
    python -m tests.support.opensearch_node run       # build if needed, start, print the URL; Ctrl-C/SIGTERM stop it
    python -m tests.support.opensearch_node run --secured  # the secured variant (below): also CA, admin, cert
    make opensearch / make opensearch-secured          # the same as `run` / `run --secured`

The version: OPENSEARCH_TEST_VERSION (default 2.19.1; 3.5.0 is the 3.x the suite runs on). What differs (settings.py):
- 2.x: every artifact from Maven Central; its integ-test zip has no modules but transport, so lang-painless and
  analysis-common are fetched and laid out beside it; runs on a JDK 17 (or 21);
- 3.x: the integ-test zip ships all its modules; Maven Central serves k-NN but not neural-search (nor the
  ml-commons client it needs): its zip is the one neural-search-3/build.sh compiles from the two source tags with
  Maven (`make opensearch-neural-search-3`, or `python -m tests.support.opensearch_node neural-search-zip`, puts it
  in CACHE_DIR; OPENSEARCH_NEURAL_SEARCH_ZIP names another, e.g. the one OpenSearch publishes); needs a full
  JDK >= 21 (OPENSEARCH_JAVA_HOME, else the newest under /usr/lib/jvm with the jdk.incubator.vector and
  jdk.localedata modules). Its secured variant installs the security plugin zip (not on Maven Central for 3.x)
  that security-3/build.sh compiles from the plugin's source tag with Maven (`make opensearch-security-3`, or
  `python -m tests.support.opensearch_node security-zip`, puts it in CACHE_DIR; OPENSEARCH_SECURITY_ZIP names
  another; security-3/README.md says what differs from the released zip).

What it does, in order:
1. Fetch (build.py, `fetch`): `mvn package` on tests/support/opensearch/pom.xml copies the integ-test
   distribution, the k-NN plugin zip and, for 2.x, the neural-search plugin zip and the lang-painless and
   analysis-common module jars, all at VERSION, out of ~/.m2 (Maven's cache: a second build downloads nothing).
2. Lay out (build.py, `build`): unzip the distribution, write the two modules' folders for 2.x (jars +
   descriptor, as the full distribution ships them), install k-NN then neural-search with the distribution's
   own `opensearch-plugin install`. The result is kept in CACHE_DIR/opensearch-VERSION and reused by every later
   run (rebuilt when another neural-search zip is given); a half-built tree is never used (built under a
   temporary name, then renamed).
3. Run (node.py, `Node`): a fresh directory per node holds its config (a copy of the distribution's, plus a
   minimal single-node opensearch.yml: loopback only, disk watermarks off, no index created by a write alone, a fixed
   heap; no security plugin unless secured, below), data and logs. Started as the unprivileged user RUN_AS
   when we are root (OpenSearch refuses root), in the foreground under a supervisor of its own (4.), waited on
   until the cluster is green; stopped by its PID (OpenSearch's PID file). A stopped node can start again on
   the same data and port (the outage tests do that).
4. Never outlive the starter: the JVM is the child of a small supervisor (supervisor.py, `supervise`: run by
   path with `python -I`) whose stdin is a pipe only the starting process holds. When that process dies,
   however it dies (SIGKILL too), the pipe reads EOF and the supervisor stops the JVM (SIGTERM, SIGKILL after
   ORPHAN_STOP_TIMEOUT) and removes the node's directory; were the supervisor itself killed, the kernel
   SIGKILLs the JVM (PR_SET_PDEATHSIG, set in the launcher after it became RUN_AS). The runner (runner.py:
   `run`, `make opensearch`) stops its node on SIGINT, SIGTERM and SIGHUP. (The node used to be daemonised: a
   runner killed by SIGTERM, or a killed test session, left its JVM running.)

The secured variant (`build(secured=True)`, `start_node(secured=True)`, `run --secured`; the tests' session
fixture `secured_opensearch` in tests/support/clusters.py): the same tree plus the security plugin
(2.x: org.opensearch.plugin:opensearch-security:PLUGIN_VERSION, zip, the pom's `secured` profile; 3.x: the zip
of settings.security_plugin_zip), kept apart in
CACHE_DIR/opensearch-VERSION-secured so the open tree never changes. Node.create() on it runs the plugin's
demo installer (security.py; democonfig.Installer, what tools/install_demo_configuration.sh -y -i -s runs)
into the node's own config with a generated admin password: demo certificates (their SAN has 127.0.0.1 and
localhost), TLS on HTTP and transport, basic auth, the security index initialised from
config/opensearch-security on first start. Then it takes out of the demo what would give a test's user more
than its role (the mapping of every user to own_index, which grants cluster_composite_ops -- bulk, m*-reads,
aliases -- and the demo users with published passwords) and switches the audit log off (its index would need a
replica: yellow for ever).
What a test gets from the Node:
  url (https://127.0.0.1:PORT), ca_file (config/root-ca.pem), admin ("admin", generated password),
  admin_cert (config/kirk.pem, kirk-key.pem: the admin_dn certificate, a super admin over mTLS),
  client_options(user, password) / client_options(client_cert=True): keyword arguments for opensearchpy;
  create_role(name, cluster_permissions=[…], index_permissions=[{"index_patterns": […], "allowed_actions":
  […]}]), create_user(name, password, roles=[…]), map_role, delete_user, delete_role: the security REST API
  (_plugins/_security/api/…) as admin; request(method, path, body, auth=…) for anything else.
It waits for green over TLS as admin. Measured here (2 shared cores): build 28 s cold (166 MB into an empty
~/.m2, 119 MB laid out), 8.8 s with ~/.m2 warm, 0.07 s cached; create (the installer) 1.5 s, start to green
13-14 s (the open node 9 s); JVM RSS at green about 745 MB (open: 710 MB), plus about 24 MB for the supervisor.

Why these pieces: the `hybrid` query and the normalization-processor come from neural-search, knn_vector and
radial search from k-NN (which extends lang-painless), the facts analyzer's pattern_replace, asciifolding and
porter_stem from analysis-common. k-NN's zip on Central carries no native libraries: every knn_vector of the
service names `engine: lucene` (index_templates/memory-facts.json), which needs none.

Environment (tests only; the service reads its own settings elsewhere):
  OPENSEARCH_TEST_VERSION       the node's version (default 2.19.1; 3.5.0)
  OPENSEARCH_JAVA_HOME          the JDK to run it on (default: 2.x a JDK 17 under /usr/lib/jvm, 2.19 runs on 11-21;
                                3.x the newest full JDK >= 21 there)
  OPENSEARCH_NEURAL_SEARCH_ZIP  3.x: the neural-search plugin zip (unset: CACHE_DIR/opensearch-neural-search-
                                PLUGIN_VERSION.zip, built by `make opensearch-neural-search-3`, its sha256 checked)
  OPENSEARCH_SECURITY_ZIP       3.x, secured: the security plugin zip (unset: CACHE_DIR/opensearch-security-
                                PLUGIN_VERSION.zip, built by `make opensearch-security-3`, its sha256 checked)
  OPENSEARCH_TEST_SIMD          off: leave the JDK's vector module out of the node's JVM (Lucene's SIMD vector
                                code off; to measure what it is worth)
  OPENSEARCH_TEST_HEAP          the node's JVM heap (default 512m; e.g. 4g for bench/opensearch_scale.py's
                                1,000,000 facts)
  MEMORY_TEST_CACHE             where the built distribution is kept (default: settings.cache_dir)

The modules, one job each:
  settings.py    the pins (VERSION, plugins, heap, user, host, timeouts), cache_dir, java_home, home, the plugin
                 zips from outside Maven Central (neural_search_zip, security_plugin_zip), NodeUnavailable
  build.py       fetch with Maven (pom.xml, beside it) and lay out the distribution, cached; build_neural_search_zip
                 and build_security_zip (neural-search-3/build.sh, security-3/build.sh into the cache)
  node.py        Node: create, start (under the supervisor) and wait for green, stop, remove, REST calls,
                 opensearch-py options; start_node
  security.py    the secured Node's demo installer and least-privilege baseline, users and roles (REST)
  supervisor.py  the process between a Node and its JVM (stdlib only: run by path with `python -I`)
  runner.py      the command line: build, run [--secured], neural-search-zip, security-zip
"""
