# @summary Where a fleet of twins takes its nodes from, and how it uses them.
#
# * `facts_dir`: a directory of `*.json` records on the load host (PuppetDB
#   inventory or factsets, `puppet facts show` or `puppet facts find`
#   output, or bare facts); or
# * `puppetdb` and `query`: a PuppetDB (`https://host:8081`; a bare host
#   means that) and an `inventory` or `factsets` PQL query whose records are
#   the nodes, asked with `ca_cert`, `client_cert` and `client_key` (PEM
#   files on the load host; undef: the host agent's own).
# * `assign`: how the nodes are dealt to `clone1` .. `cloneN`:
#   `round_robin` (in the nodes' name order, the default) or `mix` (every
#   first N clones hold the roles, `pp_role`, in the estate's proportions).
# * `certnames`: `clone` (the default: `clone<N>.<node label>.<load host
#   certname>`) or `node_prefix` (`<node label>-clone<N>.<load host
#   certname>`, which certname patterns such as `node /^web\d+/` still
#   match).
# * `noop`: `required` (the default: twins only with `agent_noop => true`)
#   or `waived` (the twins apply their nodes' catalogs to the clones).
# * `exports`: required, since a twin's catalog is compiled and stored like
#   its node's, exported resources included, and every node whose catalog
#   collects them (`<<| |>>`) from the same PuppetDB gets them: `isolated`
#   (the server under test stores into a PuppetDB no real node collects
#   from) or `shared` (you accept that real nodes collect the twins'
#   exported resources).
#
# @example
#   { 'facts_dir' => '/srv/estate-facts', 'exports' => 'isolated', 'assign' => 'mix' }
type Clone_army::Twins = Struct[{
  Optional['facts_dir']   => Clone_army::Absolutepath,
  Optional['puppetdb']    => Clone_army::Service_address,
  Optional['query']       => String[1],
  Optional['ca_cert']     => Clone_army::Absolutepath,
  Optional['client_cert'] => Clone_army::Absolutepath,
  Optional['client_key']  => Clone_army::Absolutepath,
  Optional['assign']      => Enum['round_robin', 'mix'],
  Optional['certnames']   => Enum['clone', 'node_prefix'],
  Optional['noop']        => Enum['required', 'waived'],
  'exports'               => Enum['isolated', 'shared'],
}]
