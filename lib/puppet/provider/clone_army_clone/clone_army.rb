# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/agent_defaults'
require_relative '../../../puppet_x/clone_army/batch'
require_relative '../../../puppet_x/clone_army/helper'
require_relative '../../../puppet_x/clone_army/secrets'
require_relative '../../../puppet_x/clone_army/shape'
require_relative '../../../puppet_x/clone_army/twins'

Puppet::Type.type(:clone_army_clone).provide(:clone_army) do
  desc <<-DOC
    Manages clones with the `clone-army` helper. All clones are read with one
    `clone-army clone list` per run (prefetch); changes of base, server,
    server port, certname and load shape are applied once per resource in `flush`, with
    one `clone-army clone configure` carrying only what changed. The clones
    new in the run are made with one `clone-army clone create-many` (one
    daemon-reload) when Puppet evaluates the first of them, after one
    `clone-army base list` has shown their bases there; each fails its own
    resource if it could not be made. After all clones are evaluated, the
    clones removed in the run go with one `clone-army clone remove`, the
    running clones
    whose schedule or certname changed are stopped with one `clone-army clone
    stop`, and those and the new clones are started with one `clone-army
    clone start --ramp-up N` (N the largest `ramp_up`), which spreads them
    over N seconds.
  DOC

  confine kernel: 'Linux'

  mk_resource_methods

  # What `clone configure` sets in place.
  def self.configuration
    [:server, :server_port, :certname, :twin] + PuppetX::CloneArmy::Shape::PROPERTIES
  end

  # The properties whose change restarts a running clone (batched, after
  # all clones are evaluated), because the clone reads them only when it
  # boots: its systemd reads the run units, its hostname is the certname,
  # its nspawn binds the apply source.
  # A phase or phasing alone does not: every clone's phase_count moves
  # whenever the fleet grows or shrinks (and a new phasing moves every
  # clone's offset), and restarting the whole fleet for that would be the
  # herd phasing avoids. A new run mode that needs a restart extends
  # this list (and only this list).
  def self.restart_on
    @restart_on ||= [:run_mode, :runinterval, :splay, :certname, :apply_source]
  end

  # The properties this provider reads from one entry of `clone list`. A
  # server, server port or certname the clone's puppet.conf lacks (null) is
  # :absent.
  #
  # A clone the helper reports as `incomplete` (a create or remove killed
  # half-way) is :incomplete, which no `ensure` is in sync with: Puppet then
  # creates it again (which finishes it) or removes it.
  def self.from_helper(clone)
    incomplete = (clone['problems'] || []).any? { |problem| problem['kind'] == 'incomplete' }
    {
      name: clone['name'],
      ensure: incomplete ? :incomplete : clone['state'].to_sym,
    }.merge([:base, :server, :server_port, :certname].to_h { |property| [property, clone[property.to_s] || :absent] })
      .merge(twin: clone['twin_of'] || :absent)
      .merge(PuppetX::CloneArmy::Shape.from_helper(clone))
  end

  def self.instances
    PuppetX::CloneArmy::Helper.new.clone_list.map { |clone| new(from_helper(clone)) }
  end

  def self.prefetch(resources)
    clones = PuppetX::CloneArmy::Helper.listing_for_preview(resources, :clone_list)
    clones.each do |clone|
      resource = resources[clone['name']]
      resource.provider = new(from_helper(clone)) if resource
    end
  end

  def initialize(value = {})
    super(value)
    @property_flush = {}
  end

  # :running, :stopped, :incomplete or :absent.
  def state
    @property_hash[:ensure] || :absent
  end

  # An :incomplete clone is created again, not started or configured.
  def exists?
    ![:absent, :incomplete].include?(state)
  end

  # Makes the clone now, so that a clone that cannot be made fails this
  # resource: with every other clone the run is to create, by one `clone
  # create-many`, when it is the first (PuppetX::CloneArmy::Creations).
  # With `start`, it is queued to be started with the others after all
  # clones are evaluated.
  def create(start:)
    if resource[:base].nil?
      raise Puppet::Error, "cannot create clone #{name}: base not given (the clone_army_base it boots from, e.g. base => 'debian-12')"
    end

    update_from(self.class.batch.creations.create(self, self.class.to_be_created(resource.catalog)))
    self.class.batch.start(self, resource[:ramp_up]) if start
    @property_flush = {}
  end

  # The providers of the clones in `catalog` that this run is to create:
  # absent or incomplete as prefetch found them, and asked to exist, from a
  # base, not in noop.
  def self.to_be_created(catalog)
    return [] unless catalog

    catalog.resources.filter_map do |resource|
      provider = resource.provider if resource.type == :clone_army_clone
      provider if provider.is_a?(self) && provider.to_be_created?
    end
  end

  def to_be_created?
    !exists? && !resource.nil? && [:present, :running, :stopped].include?(resource[:ensure]) &&
      !resource[:base].nil? && !resource.noop?
  end

  # The base a new clone boots from.
  def base_to_create
    creating[:wanted][:base]
  end

  # Queues the removal for post_resource_eval, which removes every clone
  # queued in the run with one `clone remove` (one batch of stops and one
  # daemon-reload instead of one each per clone).
  def destroy
    self.class.batch.remove(self)
    @property_hash = { name: name, ensure: :absent }
    @property_flush = {}
  end

  def start
    flush_changes
    return if state == :running

    update_from(helper.clone_start(name))
  end

  def stop
    flush_changes
    return if state == :stopped

    update_from(helper.clone_stop(name))
  end

  # Stop, then start: a refresh of a running clone (the helper has no
  # restart verb). A clone already queued for a restart (a changed
  # restart_on property) is restarted once, with the others.
  def restart
    return if self.class.batch.restarting?(self)

    update_from(helper.clone_stop(name))
    update_from(helper.clone_start(name))
  end

  ([:base] + configuration).each do |property|
    define_method(:"#{property}=") do |value|
      @property_flush[property] = value
    end
  end

  def flush
    flush_changes
  end

  # Applies pending changes: a new base, or a twin made a clone of no node,
  # recreates the clone (started again if it was running and is not to be
  # stopped); anything else is set in place with one `clone configure`
  # carrying only the changed settings.
  # Called from flush, and by start/stop so that a clone starts with its new
  # configuration.
  def flush_changes
    return if @property_flush.empty? || !exists?

    if @property_flush.key?(:base) || @property_flush[:twin] == :absent
      recreate
    else
      changes = @property_flush.slice(*self.class.configuration)
      queue_restart if restart_needed?(changes)
      configure(changes)
    end
    @property_flush = {}
  end

  # A running clone that is to keep running restarts for a change of a
  # restart_on property.
  def restart_needed?(changes)
    state == :running && resource && resource[:ensure] != :stopped &&
      (changes.keys & self.class.restart_on).any?
  end

  def queue_restart
    self.class.batch.restart(self, resource[:ramp_up])
  end

  # What is left to do after all clones are evaluated (PuppetX::CloneArmy::Batch).
  def self.batch
    @batch ||= PuppetX::CloneArmy::Batch.new
  end

  # Puppet calls this once per run for this provider, after all clones are
  # evaluated. With a clone_army_fleet resource in the catalog the batch is
  # empty by now (that resource did the work and failed for a failure);
  # without one (`puppet resource clone_army_clone ...`) it is done here, and
  # a failure ends the call, after every clone was tried.
  def self.post_resource_eval
    messages = log_failures(batch.run)
    raise Puppet::Error, messages.join('; ') unless messages.empty?
  end

  # Removes the queued clones with one `clone remove`. Also called before a
  # base is removed (clone_army_base's provider), so that its clones are
  # gone by then. Returns the failures' messages.
  def self.flush_removals
    log_failures(batch.run_removals)
  end

  # Logs each failure as an error against its clone; returns the messages.
  def self.log_failures(failures)
    failures.map do |failure|
      message = "Could not #{failure.verb} clone #{failure.provider.name}: #{failure.error.message}"
      failure.provider.resource&.err(message)
      message
    end
  end

  # Takes in the answer of `clone create-many|start|stop`: the clone as the helper
  # reports it.
  def update_from(clones)
    clone = clones.find { |entry| entry['name'] == name }
    raise Puppet::Error, "clone-army did not report clone #{name} in its answer: #{clones.to_json}" unless clone

    @property_hash = self.class.from_helper(clone)
  end

  # What this clone's create hands the helper in files rather than on a
  # command line (the root password hash and challenge password, and the
  # facts as JSON), keyed by this clone's name so that a batch's files can
  # share one private directory: { key => content }.
  def create_files
    facts = PuppetX::CloneArmy::Shape.facts_file_content(creating[:shape])
    { root_password_hash: resource[:root_password_hash], challenge_password: resource[:challenge_password], facts: facts }
      .compact.transform_keys { |kind| file_key(kind) }
  end

  # clone_create's keywords for this clone, given where the files of
  # create_files are ({ key => path }).
  def create_request(paths)
    shape = PuppetX::CloneArmy::Shape.for_helper(creating[:shape], paths[file_key(:facts)])
    creating[:wanted].merge(start: false, shape: shape,
                            root_password_hash_file: paths[file_key(:root_password_hash)],
                            challenge_password_file: paths[file_key(:challenge_password)])
  end

  def helper
    @helper ||= PuppetX::CloneArmy::Helper.new(resource && resource[:helper])
  end

  private

  # What a new clone is made with, as its resource asks (a recreated clone
  # sets its own, see create_clone).
  def creating
    @creating ||= {
      wanted: with_defaults({ base: resource[:base], server: resource[:server], server_port: resource[:server_port],
                              certname: resource[:certname], twin_file: twin_file(resource[:twin]) }, resource[:run_mode]),
      shape: PuppetX::CloneArmy::Shape::PROPERTIES.to_h { |property| [property, resource[property]] }.compact,
    }
  end

  # Sets `changes` (server, certname, shape) in place with one `clone
  # configure`.
  def configure(changes)
    # The helper takes the phase as a pair: the other half comes along.
    if changes.key?(:phase_index) || changes.key?(:phase_count)
      changes[:phase_index] = kept(:phase_index)
      changes[:phase_count] = kept(:phase_count)
    end
    shape = changes.slice(*PuppetX::CloneArmy::Shape::PROPERTIES)
    settings = changes.slice(:server, :server_port, :certname)
    settings[:twin_file] = twin_file(changes[:twin])
    clone = with_facts_file(shape) do |options|
      helper.clone_configure(name, **settings.compact, shape: options)
    end
    @property_hash = self.class.from_helper(clone)
  end

  # The server and certname a clone is made with where none is given or
  # known: the host agent's server (an agent needs one) with its port, and a
  # certname under the host's own. A server given keeps the port given
  # with it (none: Puppet's default).
  def with_defaults(wanted, run_mode)
    wanted = wanted.dup
    if wanted[:server].nil? && run_mode != :apply
      wanted[:server] = PuppetX::CloneArmy::AgentDefaults.server
      wanted[:server_port] ||= PuppetX::CloneArmy::AgentDefaults.server_port
    end
    wanted[:certname] ||= PuppetX::CloneArmy::AgentDefaults.certname(name, Puppet[:certname])
    wanted
  end

  # Removes the clone and creates it again on the new base, keeping (or
  # applying) its server, server port, certname and load shape; where they are not known,
  # it gets the defaults a new clone gets.
  def recreate
    start_again = state == :running && resource[:ensure] != :stopped
    wanted = with_defaults({ base: kept(:base), server: kept(:server), server_port: kept(:server_port),
                             certname: kept(:certname), twin_file: twin_file(kept(:twin)) }, kept(:run_mode))
    shape = kept_shape
    helper.clone_remove(name)
    @property_hash = { name: name, ensure: :absent }
    create_clone(wanted, shape, start_again)
  end

  # The load shape a recreated clone keeps: what is asked for, and what it
  # had where that is not what `clone create` sets anyway.
  def kept_shape
    defaults = PuppetX::CloneArmy::Shape::CREATE_DEFAULTS
    shape = defaults.keys.to_h { |property| [property, kept(property)] }.compact
    shape = shape.reject { |property, value| resource[property].nil? && value == defaults[property] }
    # The phase goes as a pair.
    [:phase_index, :phase_count].each { |property| shape[property] = kept(property) } if (shape.keys & [:phase_index, :phase_count]).any?
    shape
  end

  # The value of `attribute` a recreated clone gets: the new one, else the
  # current one (nil when neither is known).
  def kept(attribute)
    current = @property_hash[attribute]
    value = @property_flush[attribute]
    value = resource[attribute] if value.nil?
    value = current if value.nil? && current != :absent
    value
  end

  # Runs `clone create` at once (a clone recreated on a new base), without
  # starting the clone; a clone to be started is queued for
  # post_resource_eval.
  def create_clone(wanted, shape, start)
    @creating = { wanted: wanted, shape: shape }
    clone = PuppetX::CloneArmy::Secrets.with_files(create_files) do |paths|
      helper.clone_create(name, **create_request(paths))
    end
    @property_hash = self.class.from_helper(clone)
    self.class.batch.start(self, resource[:ramp_up]) if start
  end

  # Yields `shape` as the helper takes it: the facts (a Hash) written as
  # JSON to a file of mode 0600 in a private directory, passed as its path
  # and removed when the helper has run (or failed).
  def with_facts_file(shape, &block)
    content = PuppetX::CloneArmy::Shape.facts_file_content(shape)
    return yield(PuppetX::CloneArmy::Shape.for_helper(shape, nil)) unless content

    PuppetX::CloneArmy::Secrets.with_files(facts: content) do |files|
      block.call(PuppetX::CloneArmy::Shape.for_helper(shape, files[:facts]))
    end
  end

  # The record of `node` that `clone create|configure --twin-file` is given;
  # none for no twin.
  def twin_file(node)
    node.nil? || node == :absent ? nil : PuppetX::CloneArmy::Twins.file(node)
  end

  def file_key(kind)
    :"#{name}.#{kind}"
  end
end
