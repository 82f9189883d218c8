# frozen_string_literal: true

require 'securerandom'
require_relative 'spec_helper_acceptance'

# Classified through a Puppet Server, the way PE console users do it:
# the module sits in the server's environment (the sandbox's read-only bind at
# /etc/puppet/code/modules/clone_army, on Debian's basemodulepath), site.pp
# stands in for the console and classifies only the sandbox host's certname
# with class clone_army, and the sandbox host's own agent runs `puppet agent -t`
# against the sandbox's Puppet Server.
#
# To prove that the types, providers and the fact arrive by pluginsync and the
# helper from puppet:///modules/clone_army/clone-army, the agent's libdir is
# emptied and the installed helper deleted first.
#
# Runs after clone_army_spec.rb on the shared sandbox and reuses its fleet:
# the class is given the fleet's own settings, read from the helper's listing
# (num_clones equal to the existing fleet), so nothing is built or restarted.
# site.pp, the libdir and the helper are restored afterwards.

# What the spec needs besides the harness: the shell it runs in the sandbox
# and the class parameters that reproduce the existing fleet.
module ServerClassification
  # The module inside the sandbox (sandbox.sh binds this checkout there).
  MODULE_INSIDE = '/etc/puppet/code/modules/clone_army'

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
    keys = ['base', 'master'] + SHAPE.keys
    odd = fleet.reject { |c| c.slice(*keys) == fleet.first.slice(*keys) }.map { |c| c['name'] }
    raise "#{odd.join(', ')} differ from #{fleet.first['name']}: not one class's fleet" unless odd.empty?

    fleet
  end

  # The class parameters that reproduce the fleet as the helper lists it, so
  # the catalog changes nothing in the clones. master is always given: left
  # out, the class takes $server_facts['servername'], which is the server
  # host's FQDN fact (here the sandbox's own name, on 127.0.1.1 and not in the
  # server's certificate), not the name the clones reach it by ('puppet').
  def fleet_params(listed)
    fleet = one_class_fleet(listed)
    first = fleet.first
    params = { num_clones: fleet.size, base: first['base'], master: first['master'] }
    SHAPE.each do |field, default|
      value = first[field]
      params[field == 'facts' ? :fleet_facts : field.to_sym] = value unless value.nil? || value == default
    end
    params
  end
end

RSpec.describe 'class clone_army classified through the Puppet Server' do
  environment = '/etc/puppet/code/environments/production'
  site_pp = "#{environment}/manifests/site.pp"
  site_pp_saved = "#{site_pp}.clone-army-acceptance"
  agent_timeout = 600

  # A valid crypt(3) hash whose salt is unique to this run, so finding it
  # anywhere in a log or a report means the Sensitive value leaked.
  marker = "caSecret#{SecureRandom.alphanumeric(16)}"
  password_hash = "$6$#{marker}$#{'x' * 86}"

  def agent_run(timeout)
    SandboxHarness.log 'puppet agent -t'
    started = Time.now
    result = on_sandbox('puppet', 'agent', '-t', '--color=false', timeout: timeout)
    SandboxHarness.log format('puppet agent -t exited %<rc>s after %<s>.0f s', rc: result.exitstatus,
                                                                               s: Time.now - started)
    result
  end

  before(:all) do
    @started = Time.now
    @libdir = on_sandbox!('puppet', 'config', 'print', '--section', 'agent', 'libdir').stdout.strip
    raise "unexpected libdir #{@libdir.inspect}" unless @libdir.start_with?('/var/')

    @fleet_before = clone_list
    raise "no fleet to reuse (clone_army_spec.rb sets it up)\n#{diagnostics}" if @fleet_before.empty?

    params = ServerClassification.fleet_params(@fleet_before)
    params[:root_password_hash] = "Sensitive(#{ServerClassification.puppet_literal(password_hash)})"
    body = params.map do |k, v|
      "    #{k} => #{k == :root_password_hash ? v : ServerClassification.puppet_literal(v)},"
    end
    site = <<~PP
      # Written by spec/acceptance/server_classification_spec.rb (standing in for the PE console).
      node '#{host_certname}' {
        class { 'clone_army':
      #{body.join("\n")}
        }
      }
      node default {}
    PP
    SandboxHarness.log "site.pp classifies #{host_certname}:\n#{site}"

    # Set aside what is there (site.pp, libdir), so that the after hook puts
    # back exactly that; say whether the environment had to be made.
    @made_env = on_sandbox!('sh', '-ec', ServerClassification::SET_ASIDE, 'sh', environment, site_pp, site_pp_saved, @libdir,
                            timeout: 60).stdout.include?('made-environment')
    on_sandbox!('sh', '-ec', 'printf "%s" "$2" >"$1"', 'sh', site_pp, site, timeout: 60)
    on_sandbox!('rm', '-f', SandboxHarness::HELPER, timeout: 60)

    @first = agent_run(agent_timeout)
    @plugins = on_sandbox('find', @libdir, '-type', 'f', '-printf', '%P\n', timeout: 60).stdout.lines.map(&:strip)
    @helper_same = on_sandbox('cmp', SandboxHarness::HELPER, "#{ServerClassification::MODULE_INSIDE}/files/clone-army",
                              timeout: 60)
    @second = agent_run(agent_timeout)
    @elapsed = Time.now - @started
  end

  after(:all) do
    on_sandbox('sh', '-c', ServerClassification::PUT_BACK, 'sh', site_pp, site_pp_saved, @libdir.to_s, SandboxHarness::HELPER,
               ServerClassification::MODULE_INSIDE, @made_env ? environment : '', timeout: 120)
    SandboxHarness.log format('server classification took %<s>.0f s (both agent runs)', s: @elapsed.to_f)
  end

  it 'applies the classified catalog and exits 2 (--detailed-exitcodes), then 0' do
    expect(@first.exitstatus).to eq(2), @first.to_s
    expect(@first.output).not_to match(%r{^Error:}), @first.to_s
    expect(@second.exitstatus).to eq(0), @second.to_s
  end

  it 'gets the types, providers and the fact by pluginsync' do
    expect(@plugins).to include('puppet/type/clone_army_clone.rb', 'puppet/type/clone_army_base.rb',
                                'puppet/provider/clone_army_clone/clone_army.rb',
                                'puppet/provider/clone_army_base/clone_army.rb',
                                'facter/clone_army.rb', 'puppet_x/clone_army/capacity.rb'),
                        "libdir #{@libdir} after the first run: #{@plugins.inspect}\n#{@first}"
  end

  it 'installs the helper from puppet:///modules/clone_army/clone-army' do
    expect(@first.stdout).to match(%r{File\[#{Regexp.escape(SandboxHarness::HELPER)}\]/ensure: defined content}),
                             @first.to_s
    expect(@helper_same.exitstatus).to eq(0), @helper_same.to_s
  end

  it 'leaves the fleet as it was (nothing built, created or removed)' do
    after = clone_list
    keys = ['name', 'base', 'master', 'certname', 'state', 'run_mode', 'runinterval', 'phase_index', 'phase_count']
    expect(after.map { |c| c.slice(*keys) }).to eq(@fleet_before.map { |c| c.slice(*keys) }), diagnostics
    expect(@first.stdout).not_to match(%r{Clone_army_(clone|base)\[}), @first.to_s
  end

  it "stores the host's clone_army fact on the server" do
    facts = on_sandbox('sh', '-c', 'cat /var/lib/puppetserver/server_data/facts/"$1".json ' \
                                   '/var/lib/puppetserver/yaml/facts/"$1".yaml 2>/dev/null',
                       'sh', host_certname, timeout: 30).stdout
    expect(facts).to match(%r{"clone_army"\s*:\s*\{.*"capacity"\s*:\s*\{\s*"daemon"\s*:\s*\d+}m),
                     "no clone_army fact for #{host_certname} on the server: #{facts[0, 2000]}"
    expect(facts).to match(%r{"clones"\s*:\s*\{\s*"names"}m),
                     "the fact lists no clones (helper not found?): #{facts[0, 2000]}"
  end

  it 'never shows the Sensitive root_password_hash in agent output, logs or reports' do
    read = {
      'reports on the server' => on_sandbox('sh', '-c', 'cat "$1"/"$2"/*.yaml', 'sh', SandboxHarness::REPORT_DIR,
                                            host_certname, timeout: 60),
      "the agent's last run report" => on_sandbox('sh', '-c', 'cat "$(puppet config print --section agent lastrunreport)"',
                                                  timeout: 60),
      'the journal' => on_sandbox('journalctl', '--no-pager', '-o', 'cat', '--since', '-15min', timeout: 60),
    }
    read.each { |place, result| expect(result.exitstatus).to eq(0), "could not read #{place}: #{result}" }
    expect(read["the agent's last run report"].stdout).to include(host_certname)
    places = read.transform_values(&:stdout).merge('first run output' => @first.output,
                                                   'second run output' => @second.output)
    places.each do |place, text|
      expect(text).not_to include(marker), "the root_password_hash appears in #{place}"
    end
  end
end
