# frozen_string_literal: true

# What the specs that go through the Puppet Server share
# (server_classification_spec.rb, git_deploy_spec.rb): the shell they run in
# the sandbox to set site.pp and the agent's libdir aside and back, and the
# class parameters that reproduce the existing fleet. Not a spec file itself.

module ServerClassification
  # Puts a copy of the module into the server's environment (args: the
  # environment's module directory, then the command that writes it there),
  # replacing one an earlier run left.
  # Says `made-modules` when it had to make the environment's modules/.
  INSTALL_MODULE = <<~'SH'
    module=$1; shift
    rm -rf "$module"
    if [ ! -d "$(dirname "$module")" ]; then echo made-modules; mkdir -p "$(dirname "$module")"; fi
    "$@"
  SH

  # Removes that copy, and modules/ when INSTALL_MODULE made it (args: the
  # module directory, `made-modules` or nothing).
  REMOVE_MODULE = <<~'SH'
    rm -rf "$1"
    if [ "$2" = made-modules ]; then rmdir "$(dirname "$1")"; fi
    true
  SH

  # Moves site.pp and the agent's libdir aside (args: environment, site.pp,
  # its saved name, libdir) and leaves an empty libdir.
  SET_ASIDE = <<~'SH'
    env=$1 site=$2 saved=$3 libdir=$4
    if [ ! -d "$env" ]; then echo made-environment; fi
    mkdir -p "$env/manifests"
    rm -f "$saved"
    if [ -e "$site" ]; then mv "$site" "$saved"; fi
    rm -rf "$libdir.clone-army-acceptance"
    if [ -d "$libdir" ]; then mv "$libdir" "$libdir.clone-army-acceptance"; fi
    mkdir -p "$libdir"
  SH

  # Puts back site.pp, the libdir and the environment as they were, and the
  # helper if a run failed before installing it (args: site.pp, its saved
  # name, libdir, helper, module, the environment when SET_ASIDE made it).
  PUT_BACK = <<~'SH'
    site=$1 saved=$2 libdir=$3 helper=$4 module=$5 made_env=$6
    rm -f "$site"
    if [ -e "$saved" ]; then mv "$saved" "$site"; fi
    if [ -n "$made_env" ]; then rm -rf "$made_env"; fi
    if [ -n "$libdir" ] && [ -d "$libdir.clone-army-acceptance" ]; then
      rm -rf "$libdir" && mv "$libdir.clone-army-acceptance" "$libdir"
    fi
    if [ ! -x "$helper" ]; then install -m 0755 "$module/files/clone-army" "$helper"; fi
  SH

  # Fields of the helper's listing that are class parameters of the same name
  # (`facts` is the class's fleet_facts), with the class's default for each:
  # a field at its default is left out of site.pp.
  SHAPE = {
    'run_mode' => 'daemon', 'runinterval' => 1800, 'splay' => 0, 'facts' => {}, 'generated_facts' => 0,
    'churn_percent' => 0, 'memory_max' => nil, 'cpu_quota' => nil, 'tasks_max' => nil
  }.freeze

  module_function

  # Puppet literal for a value from the helper's JSON listing.
  def puppet_literal(value)
    case value
    when String then "'#{value.gsub('\\', '\\\\\\').gsub("'", "\\\\'")}'"
    when Hash then "{ #{value.map { |k, v| "#{puppet_literal(k.to_s)} => #{puppet_literal(v)}" }.join(', ')} }"
    else value.to_s
    end
  end

  # clone1..cloneN of the listing, in order, or an error.
  def numbered_clones(listed)
    numbered = listed.select { |c| c['name'].match?(%r{\Aclone[1-9][0-9]*\z}) }
                     .sort_by { |c| c['name'].delete_prefix('clone').to_i }
    names = numbered.map { |c| c['name'] }
    raise "the fleet is not clone1..cloneN: #{names.inspect}" unless names == (1..names.size).map { |i| "clone#{i}" }

    numbered
  end

  # The clones of one class (clone1..cloneN, all alike), or an error.
  def one_class_fleet(listed)
    fleet = numbered_clones(listed)
    keys = ['base', 'server'] + SHAPE.keys
    odd = fleet.reject { |c| c.slice(*keys) == fleet.first.slice(*keys) }.map { |c| c['name'] }
    raise "#{odd.join(', ')} differ from #{fleet.first['name']}: not one class's fleet" unless odd.empty?

    fleet
  end

  # The class parameters that reproduce the fleet as the helper lists it, so
  # the catalog changes nothing in the clones. With `server: false` the
  # fleet's server is left to the class's default: the name the load host's
  # own agent reaches its server by (the clone_army_agent_server fact), which
  # in the sandbox is `puppet`, as the clones have it; the server's fqdn
  # (`servername`, the sandbox's own name on 127.0.1.1) is not in its
  # certificate.
  def fleet_params(listed, server: true)
    fleet = one_class_fleet(listed)
    first = fleet.first
    params = { num_clones: fleet.size, base: first['base'] }
    params[:server] = first['server'] if server
    SHAPE.each do |field, default|
      value = first[field]
      params[field == 'facts' ? :fleet_facts : field.to_sym] = value unless value.nil? || value == default
    end
    params
  end
end
