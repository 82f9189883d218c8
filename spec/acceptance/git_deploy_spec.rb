# frozen_string_literal: true

require 'fileutils'
require 'tmpdir'
require_relative 'spec_helper_acceptance'
require_relative 'server_classification'

# Deployed from git by r10k, as a control repository's Puppetfile deploys it:
# a bare clone of the checkout (which has no files/clone-army: the helper is
# built, not tracked), named with its HEAD commit in a Puppetfile that the
# sandbox's own r10k (Debian's package) installs into a module directory of
# its own. That tree goes into the Puppet Server's production environment,
# whose modules/ comes before the checkout that the sandbox binds on Debian's
# basemodulepath. site.pp classifies the sandbox host and its own agent runs
# against the sandbox's Puppet Server:
#   1. without helper_source the catalog fails at once, saying what to do;
#   2. with helper_source => 'http://<loopback>:<port>/clone-army' (a
#      python3 http.server this spec starts on SERVER_ADDR, which the sandbox
#      reaches: it shares this machine's network) and helper_checksum (the
#      sha256 that `make dist` writes), Puppet fetches and verifies the helper
#      (a wrong checksum installs nothing), and the fleet goes on checking in.
#
# r10k installs into a directory of its own because `r10k puppetfile install`
# removes whatever its module directory holds that the Puppetfile does not
# name; the environment's modules/ may hold other specs' modules.
#
# Place in the suite: after fleet_lifecycle_spec.rb, whose fleet (two clones
# on the suite's base) it reuses with the fleet's own settings, so nothing is
# built or restarted; alone (no fleet yet), it creates one clone, building the
# base. site.pp, the helper and the environment are put back afterwards, the
# r10k directories removed and the HTTP server stopped by its PID, on failure
# too.
RSpec.describe 'class clone_army deployed from git by r10k, with helper_source' do
  environment = SandboxHarness::ENVIRONMENT
  site_pp = "#{environment}/manifests/site.pp"
  site_pp_saved = "#{site_pp}.clone-army-git-deploy"
  # The first run may build a base (debootstrap) when there is no fleet to reuse.
  agent_timeout = 1200
  # r10k's module directory and cache in the sandbox, removed afterwards.
  r10k_dir = '/var/tmp/clone-army-r10k'

  # Installs the Puppetfile's modules into r10k_dir/modules with r10k, its
  # cache under r10k_dir too (args: r10k_dir, the Puppetfile); prints the
  # deployed module's files and its commit.
  r10k_install = <<~'SH'
    dir=$1 puppetfile=$2
    rm -rf "$dir"
    mkdir -p "$dir/modules"
    HOME=$dir r10k puppetfile install --puppetfile "$puppetfile" --moduledir "$dir/modules"
    echo "--- files"
    cd "$dir/modules/clone_army" && find . -path ./.git -prune -o -type f -print
    echo "--- commit"
    git -C "$dir/modules/clone_army" rev-parse HEAD
  SH

  # Moves site.pp aside (args: environment, site.pp, its saved name); says
  # `made-environment` when the environment had to be made.
  set_aside = <<~'SH'
    env=$1 site=$2 saved=$3
    if [ ! -d "$env" ]; then echo made-environment; fi
    mkdir -p "$env/manifests"
    rm -f "$saved"
    if [ -e "$site" ]; then mv "$site" "$saved"; fi
  SH

  def agent_run(timeout)
    SandboxHarness.log 'puppet agent -t'
    started = Time.now
    # No cached catalog: a failed compile must fail the run.
    result = on_sandbox('puppet', 'agent', '-t', '--color=false', '--no-usecacheonfailure', timeout: timeout)
    SandboxHarness.log format('puppet agent -t exited %<rc>s after %<s>.0f s', rc: result.exitstatus, s: Time.now - started)
    result
  end

  def classify(site_pp, params)
    body = params.map { |k, v| "    #{k} => #{ServerClassification.puppet_literal(v)}," }
    site = <<~PP
      # Written by spec/acceptance/git_deploy_spec.rb.
      node '#{host_certname}' {
        class { 'clone_army':
      #{body.join("\n")}
        }
      }
      node default {}
    PP
    SandboxHarness.log "site.pp classifies #{host_certname}:\n#{site}"
    on_sandbox!('sh', '-ec', 'printf "%s" "$2" >"$1"', 'sh', site_pp, site, timeout: 60)
  end

  before(:all) do
    @work = Dir.mktmpdir('git-deploy', SandboxHarness.work_dir)
    dist = SandboxHarness.dist!
    @checksum = dist[:helper_sha256]

    # The checkout as a git server holds it, and the Puppetfile that names it.
    repository = File.join(@work, 'clone_army.git')
    ok = system('git', 'clone', '--quiet', '--bare', '--no-hardlinks', SandboxHarness::MODULE_DIR, repository)
    raise "git clone --bare #{SandboxHarness::MODULE_DIR} failed" unless ok

    @commit = IO.popen(['git', '-C', SandboxHarness::MODULE_DIR, 'rev-parse', 'HEAD'], &:read).strip
    puppetfile = File.join(@work, 'Puppetfile')
    File.write(puppetfile, <<~PUPPETFILE)
      # Written by spec/acceptance/git_deploy_spec.rb.
      mod 'clone_army',
        git: '#{inside(repository)}',
        commit: '#{@commit}'
    PUPPETFILE
    @r10k = on_sandbox('sh', '-ec', r10k_install, 'sh', r10k_dir, inside(puppetfile), timeout: 600)
    raise "r10k puppetfile install failed:\n#{@r10k}" unless @r10k.exitstatus.zero?

    sections = @r10k.stdout.split(%r{^--- (files|commit)\n}).drop(1).each_slice(2).to_h
    @deployed = sections.fetch('files', '').lines.map { |line| line.strip.delete_prefix('./') }
    @deployed_commit = sections.fetch('commit', '').strip
    www = File.join(@work, 'www')
    FileUtils.mkdir_p(www)
    FileUtils.cp(dist[:helper], File.join(www, 'clone-army'))
    @http = LoopbackHttp.new(www, SandboxHarness::SERVER_ADDR, log: File.join(@work, 'http.log')).start

    # Alone, no earlier spec has installed the helper: no fleet to reuse.
    helper_there = on_sandbox('test', '-x', SandboxHarness::HELPER, timeout: 30).exitstatus.zero?
    listed = helper_there ? clone_list : []
    params = if listed.empty?
               { server: SandboxHarness::SERVER, num_clones: 1, runinterval: SandboxHarness::RUNINTERVAL }
             else
               ServerClassification.fleet_params(listed)
             end
    @certnames = listed.empty? ? ["clone1.#{host_certname}"] : listed.map { |c| c['certname'] }

    @made_env = on_sandbox!('sh', '-ec', set_aside, 'sh', environment, site_pp, site_pp_saved,
                            timeout: 60).stdout.include?('made-environment')
    install = on_sandbox!('sh', '-ec', ServerClassification::INSTALL_MODULE, 'sh', SandboxHarness::ENVIRONMENT_MODULE,
                          'cp', '-a', "#{r10k_dir}/modules/clone_army", "#{environment}/modules/", timeout: 120)
    @made_modules = install.stdout.include?('made-modules')

    # 1. Neither a helper in the module nor helper_source.
    classify(site_pp, params)
    @without = agent_run(agent_timeout)

    # 2. helper_source over http, with the helper deleted so that it is
    # fetched: first with a checksum it does not have, then with its own.
    on_sandbox!('rm', '-f', SandboxHarness::HELPER, timeout: 60)
    classify(site_pp, params.merge(helper_source: "#{@http.url}/clone-army", helper_checksum: '0' * 64))
    @mismatch = agent_run(agent_timeout)
    @mismatch_left = on_sandbox('ls', '-A', File.dirname(SandboxHarness::HELPER), timeout: 60).stdout.lines.map(&:strip)
    classify(site_pp, params.merge(helper_source: "#{@http.url}/clone-army", helper_checksum: @checksum))
    @since = sandbox_now
    @first = agent_run(agent_timeout)
    @installed_sha256 = on_sandbox('sha256sum', SandboxHarness::HELPER, timeout: 60).stdout.split.first
    @helper_same = on_sandbox('cmp', SandboxHarness::HELPER, "#{SandboxHarness::MODULE_BOUND}/files/clone-army", timeout: 60)
    @second = agent_run(agent_timeout)
  end

  after(:all) do
    @http&.stop
    on_sandbox('rm', '-rf', r10k_dir, timeout: 120)
    on_sandbox('sh', '-c', ServerClassification::REMOVE_MODULE, 'sh', SandboxHarness::ENVIRONMENT_MODULE,
               @made_modules ? 'made-modules' : '', timeout: 120)
    on_sandbox('sh', '-c', ServerClassification::PUT_BACK, 'sh', site_pp, site_pp_saved, '', SandboxHarness::HELPER,
               SandboxHarness::MODULE_BOUND, @made_env ? environment : '', timeout: 120)
    FileUtils.rm_rf(@work) if @work
  end

  it 'deploys the commit the Puppetfile names with r10k, without the helper binary' do
    expect(@deployed_commit).to eq(@commit), @r10k.to_s
    expect(@deployed).to include('manifests/install.pp', 'metadata.json', 'lib/puppet/type/clone_army_clone.rb')
    expect(@deployed).not_to include('files/clone-army')
  end

  it 'fails the catalog at once without helper_source, saying what to do' do
    expect(@without.exitstatus).to eq(1), @without.to_s
    expect(@without.output).to include('Could not retrieve catalog from remote server'), @without.to_s
    expect(@without.output).to include('the module has no helper binary (files/clone-army is not in it'), @without.to_s
    expect(@without.output).to include('or set helper_source and helper_checksum'), @without.to_s
    expect(@without.output).not_to match(%r{Clone_army_(clone|base)\[}), @without.to_s
  end

  it 'refuses a helper that does not match helper_checksum, and installs nothing' do
    expect([4, 6]).to include(@mismatch.exitstatus), @mismatch.to_s
    expect(@mismatch.output).to match(%r{^Error: .*File\[#{Regexp.escape(SandboxHarness::HELPER)}\]}), @mismatch.to_s
    expect(@mismatch_left.grep(%r{\Aclone-army})).to eq([]), @mismatch.to_s
  end

  it 'fetches the helper from helper_source, verified by helper_checksum, and applies (exit 2, then 0)' do
    expect(@first.exitstatus).to eq(2), @first.to_s
    expect(@first.output).not_to match(%r{^Error:}), @first.to_s
    expect(@first.stdout).to match(%r{File\[#{Regexp.escape(SandboxHarness::HELPER)}\]/ensure: created}), @first.to_s
    expect(@installed_sha256).to eq(@checksum)
    expect(@http.requests).to match(%r{"GET /clone-army HTTP/1\.[01]" 200 }), @http.requests
    expect(@helper_same.exitstatus).to eq(0), @helper_same.to_s
    expect(@second.exitstatus).to eq(0), @second.to_s
  end

  it 'has every clone check in after it (certificate signed, a new report on the server)' do
    missing = wait_for_checkins(@certnames, @since, timeout: 300)
    expect(missing).to eq([]), "no report since the helper_source run from #{missing.join(', ')}\n#{diagnostics}"
  end
end
