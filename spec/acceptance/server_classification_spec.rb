# frozen_string_literal: true

require 'securerandom'
require_relative 'spec_helper_acceptance'
require_relative 'server_classification'

# Classified through a Puppet Server, the way PE console users do it:
# the module is installed as users install it, with `puppet module install` of
# the release tarball that `make dist` (scripts/dist.sh, run here first) builds,
# into the server's production environment, whose modules/ comes before the
# checkout that the sandbox binds on Debian's basemodulepath; site.pp stands in
# for the console and classifies only the sandbox host's certname with class
# clone_army, and the sandbox host's own agent runs `puppet agent -t` against
# the sandbox's Puppet Server.
#
# To prove that the types, providers and the fact arrive by pluginsync and the
# helper from puppet:///modules/clone_army/clone-army, the agent's libdir is
# emptied and the installed helper deleted first.
#
# Runs after clone_army_spec.rb on the shared sandbox and reuses its fleet:
# the class is given the fleet's own settings, read from the helper's listing
# (num_clones equal to the existing fleet), so nothing is built or restarted.
# site.pp, the libdir and the helper are restored afterwards, and the
# installed module removed. Last in the suite's order.

RSpec.describe 'class clone_army classified through the Puppet Server' do
  environment = SandboxHarness::ENVIRONMENT
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
    @dist = SandboxHarness.dist!
    @libdir = on_sandbox!('puppet', 'config', 'print', '--section', 'agent', 'libdir').stdout.strip
    raise "unexpected libdir #{@libdir.inspect}" unless @libdir.start_with?('/var/')

    @fleet_before = clone_list
    raise "no fleet to reuse (clone_army_spec.rb sets it up)\n#{diagnostics}" if @fleet_before.empty?

    # No server: the class's default must find the name the clones have.
    params = ServerClassification.fleet_params(@fleet_before, server: false)
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
    # --force: without it `puppet module install` sees the bound checkout (the
    # same module, further down the modulepath), says it is already installed
    # and installs nothing.
    @install = on_sandbox('sh', '-ec', ServerClassification::INSTALL_MODULE, 'sh', SandboxHarness::ENVIRONMENT_MODULE,
                          'puppet', 'module', 'install', '--color=false', '--ignore-dependencies', '--force',
                          '--target-dir', "#{environment}/modules", inside(@dist[:module]), timeout: 300)
    @made_modules = @install.stdout.include?('made-modules')
    raise "puppet module install failed: #{@install}" unless @install.exitstatus.zero?

    @modulepath = on_sandbox!('puppet', 'config', 'print', 'modulepath', '--environment', 'production',
                              timeout: 60).stdout.strip
    @listed = on_sandbox('puppet', 'module', 'list', '--environment', 'production', '--color=false', timeout: 120)
    on_sandbox!('rm', '-f', SandboxHarness::HELPER, timeout: 60)

    @since = sandbox_now
    @first = agent_run(agent_timeout)
    @plugins = on_sandbox('find', @libdir, '-type', 'f', '-printf', '%P\n', timeout: 60).stdout.lines.map(&:strip)
    @helper_same = on_sandbox('cmp', SandboxHarness::HELPER, "#{SandboxHarness::ENVIRONMENT_MODULE}/files/clone-army",
                              timeout: 60)
    @second = agent_run(agent_timeout)
    @elapsed = Time.now - @started
  end

  after(:all) do
    on_sandbox('sh', '-c', ServerClassification::REMOVE_MODULE, 'sh', SandboxHarness::ENVIRONMENT_MODULE,
               @made_modules ? 'made-modules' : '', timeout: 120)
    on_sandbox('sh', '-c', ServerClassification::PUT_BACK, 'sh', site_pp, site_pp_saved, @libdir.to_s, SandboxHarness::HELPER,
               SandboxHarness::MODULE_BOUND, @made_env ? environment : '', timeout: 120)
    SandboxHarness.log format('server classification took %<s>.0f s (both agent runs)', s: @elapsed.to_f)
  end

  it 'compiles with the module that puppet module install put into the environment, ahead of the checkout' do
    expect(@install.exitstatus).to eq(0), @install.to_s
    expect(@install.stdout).to include("Preparing to install into #{environment}/modules"), @install.to_s
    expect(@modulepath).to start_with("#{environment}/modules:")
    expect(@listed.stdout).to match(%r{^#{Regexp.escape(environment)}/modules\n\S+ clonearmy-clone_army \(v\d+\.\d+\.\d+\)}),
                              @listed.to_s
    # The release carries the helper and leaves out what .pdkignore names.
    shape = on_sandbox('sh', '-c', 'test -x "$1/files/clone-army" && test -e "$1/metadata.json" && test ! -e "$1/spec"',
                       'sh', SandboxHarness::ENVIRONMENT_MODULE, timeout: 60)
    expect(shape.exitstatus).to eq(0), shape.to_s
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

  it 'has every clone check in after the runs (certificate signed, a new report on the server)' do
    certnames = @fleet_before.map { |c| c['certname'] }
    missing = wait_for_checkins(certnames, @since, timeout: 300)
    expect(missing).to eq([]), "no report since the classified run from #{missing.join(', ')}\n#{diagnostics}"
  end

  it 'installs the helper from puppet:///modules/clone_army/clone-army' do
    expect(@first.stdout).to match(%r{File\[#{Regexp.escape(SandboxHarness::HELPER)}\]/ensure: defined content}),
                             @first.to_s
    expect(@helper_same.exitstatus).to eq(0), @helper_same.to_s
  end

  it 'leaves the fleet as it was (nothing built, created or removed)' do
    after = clone_list
    keys = ['name', 'base', 'server', 'certname', 'state', 'run_mode', 'runinterval', 'phase_index', 'phase_count']
    expect(after.map { |c| c.slice(*keys) }).to eq(@fleet_before.map { |c| c.slice(*keys) }), diagnostics
    expect(@first.stdout).not_to match(%r{Clone_army_(clone|base)\[}), @first.to_s
  end

  it "points the clones, without a server in site.pp, at the name this host's agent uses" do
    agent_server = on_sandbox!('puppet', 'config', 'print', '--section', 'agent', 'server').stdout.strip
    expect(@fleet_before.map { |c| c['server'] }.uniq).to eq([agent_server]), diagnostics
    expect(clone_list.map { |c| c['server'] }.uniq).to eq([agent_server]), diagnostics
  end

  it "stores the host's clone_army fact on the server (in PuppetDB, where the server has one)" do
    facts = if puppetdb?
              JSON.generate(puppetdb_query("nodes/#{host_certname}/facts/clone_army")
                              .to_h { |fact| [fact['name'], fact['value']] })
            else
              on_sandbox('sh', '-c', 'cat /var/lib/puppetserver/server_data/facts/"$1".json ' \
                                     '/var/lib/puppetserver/yaml/facts/"$1".yaml 2>/dev/null',
                         'sh', host_certname, timeout: 30).stdout
            end
    # In any key order: PuppetDB gives the fact's keys sorted, the server's file as Facter made them.
    expect(facts).to match(%r{"clone_army"\s*:\s*\{.*"capacity"\s*:\s*\{[^\}]*"daemon"\s*:\s*\d+}m),
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
