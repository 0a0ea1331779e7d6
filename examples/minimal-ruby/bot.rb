# A complete Parley agent in plain Ruby gRPC, written from proto/ alone (no Parley SDK).
#
# It plays every game legally from the observation's generic fields (legal_moves,
# required_messages, choices, proposal_forms, proposal_bounds), and reads one game's own view
# (buysell) to show how presence of an optional field is tested. It serves
# parley.agent.v1.AgentService and grpc.health.v1.Health on --listen, or dials out to a gateway
# (--dial-out URL --token T --bot NAME) and answers the same calls over
# parley.botlink.v1.BotLinkService/Connect.
#
# It leaves Play out. grpc-ruby answers a bidirectional method left out with UNKNOWN
# ("Illegal arity of reply generator"), not UNIMPLEMENTED; the referee takes any failure of Play
# before its first answer for "not served" and asks with Act.
#
# Generate the stubs first (Debian: ruby-grpc, ruby-grpc-tools), from the repository's root,
# then run with Debian's ruby:
#
#     mkdir -p examples/minimal-ruby/gen
#     grpc_tools_ruby_protoc -I proto --ruby_out=examples/minimal-ruby/gen \
#         --grpc_out=examples/minimal-ruby/gen $(find proto/parley -name '*.proto')
#     ruby examples/minimal-ruby/bot.rb --listen 127.0.0.1:50093
#
# The health service is grpc-ruby's own (grpc/health/checker), which ships generated from the
# same standard proto as proto/grpc/health/v1; generating that proto again would define
# grpc.health.v1 twice.

require 'optparse'

$LOAD_PATH.unshift(ENV['PARLEY_STUBS'] || File.join(__dir__, 'gen'))

require 'grpc'
require 'grpc/health/checker'
require 'parley/agent/v1/agent_services_pb'
require 'parley/botlink/v1/botlink_services_pb'

Agent = Parley::Agent::V1
Game = Parley::Game::V1
Botlink = Parley::Botlink::V1

NAME = 'minimal-ruby'
VERSION = '1'
AGENT_SERVICE = 'parley.agent.v1.AgentService'

def description
  # No games listed: this bot says it plays any game. It never reads the briefing, and says so:
  # the referee then writes none for it.
  Agent::DescribeResponse.new(
    agent: Game::AgentInfo.new(
      name: NAME, version: VERSION, author: 'examples',
      description: "Plays a legal move in every game from the observation's generic fields."
    ),
    observing: Agent::Observing.new(skips_briefing: true)
  )
end

# One legal action for the observation.
def choose_action(obs)
  legal = obs.legal_moves # enum values arrive as symbols
  move =
    if legal.include?(:MOVE_KIND_SAY)
      Game::Move.new(say: Game::Say.new)
    elsif legal.include?(:MOVE_KIND_CHOOSE) && !obs.choices.empty?
      Game::Move.new(choose: Game::Choose.new(option: obs.choices[0].id))
    elsif legal.include?(:MOVE_KIND_ACCEPT) && worth_accepting?(obs)
      Game::Move.new(accept: Game::Accept.new)
    elsif legal.include?(:MOVE_KIND_PROPOSE) && !(obs.proposal_forms.empty? && obs.proposal_bounds.empty?)
      Game::Move.new(propose: Game::Propose.new(proposal: proposal(obs)))
    elsif legal.include?(:MOVE_KIND_PASS)
      Game::Move.new(pass: Game::Pass.new)
    elsif legal.include?(:MOVE_KIND_ACCEPT)
      Game::Move.new(accept: Game::Accept.new)
    else
      Game::Move.new(reject: Game::Reject.new)
    end
  # Exactly one message per required slot, addressed exactly as the slot says.
  messages = obs.required_messages.map { |slot| Game::Message.new(to: slot.to.to_a, text: 'Hello from a minimal bot.') }
  Agent::Action.new(move: move, messages: messages, private_reasoning: 'the first legal move on my list')
end

# In buysell, accept only a price that does not lose money; anything elsewhere.
def worth_accepting?(obs)
  return true unless obs.view == :buysell

  view = obs.buysell
  # standing_price is optional: a standing offer of 0 and no offer at all differ only by
  # presence, never by value.
  return false unless view.has_standing_price?

  view.role == 'seller' ? view.standing_price >= view.private_value : view.standing_price <= view.private_value
end

# Terms from the first proposal form (or the bounds): a deal choosing the first option of every
# issue, or an allocation with every amount in its range and every total met. Every amount a
# bound lists is sent, the amounts the rules fix (min = max) too.
def proposal(obs)
  form = obs.proposal_forms.first
  if form && !form.issues.empty?
    choices = form.issues.map { |i| Game::IssueChoice.new(issue: i.id, option: i.options[0].id) }
    return Game::Proposal.new(deal: Game::Deal.new(choices: choices))
  end
  bounds = (form ? form.bounds : obs.proposal_bounds).to_a
  # The middle of each range; the minimum where no upper limit is known (max_unknown: the other
  # seat's holdings are hidden, and asking for too much is refused).
  amounts = bounds.map { |b| b.max_unknown ? b.min : (b.min + b.max) / 2 }
  (form ? form.totals : []).each do |total|
    idx = bounds.each_index.select { |i| bounds[i].side == total.side && bounds[i].resource == total.resource }
    missing = total.total - idx.sum { |i| amounts[i] }
    idx.each do |i| # add what is missing (or take away the excess) bound by bound
      step = missing.positive? ? [missing, bounds[i].max - amounts[i]].min : [missing, bounds[i].min - amounts[i]].max
      amounts[i] += step
      missing -= step
    end
  end
  alloc = Game::Allocation.new
  shares = {}
  bounds.zip(amounts).each do |b, amount|
    share = shares[b.seat] ||= Game::SeatShare.new(seat: b.seat).tap { |s| alloc.shares << s }
    side = b.side == :SHARE_SIDE_GIVES ? share.gives : share.receives
    side[b.resource] = amount
  end
  Game::Proposal.new(allocation: alloc)
end

# The agent service: Act and Describe. Play is left out (see the top of the file).
class AgentServer < Agent::AgentService::Service
  def act(request, _call)
    Agent::ActResponse.new(action: choose_action(request.observation), turn: request.observation.turn)
  end

  def describe(_request, _call)
    description
  end
end

def serve(listen)
  server = GRPC::RpcServer.new(pool_size: 8)
  port = server.add_http2_port(listen, :this_port_is_insecure)
  server.handle(AgentServer)
  # SERVING for the whole server ("") and for the agent service: Parley asks both.
  health = Grpc::Health::Checker.new
  serving = Grpc::Health::V1::HealthCheckResponse::ServingStatus::SERVING
  ['', AGENT_SERVICE].each { |service| health.add_status(service, serving) }
  server.handle(health)
  puts "listening on #{listen.rpartition(':').first}:#{port}"
  $stdout.flush
  server.run_till_terminated_or_interrupted(%w[INT TERM])
  0
end

# The CallResult for one Call from the gateway.
def answer(call)
  res = Botlink::CallResult.new(call_id: call.call_id)
  case call.kind
  when :act
    res.act = Agent::ActResponse.new(action: choose_action(call.act.observation), turn: call.act.observation.turn)
  when :describe
    res.describe = description
  else
    res.error = "this bot does not know the call #{call.kind}"
  end
  res
end

# Hold a link open to the gateway and answer its calls until it closes. The gateway speaks gRPC
# over HTTP/2 without TLS on its HTTP port (http://host:port), so the channel is an insecure one
# to host:port; the team token goes in the metadata.
def dial_out(gateway, token, bot)
  target = gateway.split('://', 2).last.chomp('/')
  stub = Botlink::BotLinkService::Stub.new(target, :this_channel_is_insecure)
  outbox = Queue.new
  outbox << Botlink::ConnectRequest.new(hello: Botlink::Hello.new(bot: bot, version: VERSION))
  requests = Enumerator.new do |y|
    while (msg = outbox.pop)
      y << msg
    end
  end
  stub.connect(requests, metadata: { 'authorization' => "Bearer #{token}" }).each do |msg|
    case msg.msg
    when :welcome
      w = msg.welcome
      puts "connected as #{w.address}"
      # The contract the gateway speaks (unset from gateways older than the field).
      puts "the gateway speaks #{w.contract.package} revision #{w.contract.revision}" if w.contract
      $stdout.flush
    when :call
      c = msg.call
      Thread.new { outbox << Botlink::ConnectRequest.new(result: answer(c)) }
    end
  end
  0
rescue GRPC::BadStatus => e
  warn "link closed: #{e.code}: #{e.details}" # FAILED_PRECONDITION: refused, or replaced by a newer session
  1
ensure
  outbox&.close
end

def main
  opts = {
    listen: '127.0.0.1:50093', dial_out: ENV.fetch('PARLEY_DIAL_OUT', ''),
    token: ENV.fetch('PARLEY_TOKEN', ''), bot: ENV.fetch('PARLEY_BOT', '')
  }
  parser = OptionParser.new do |p|
    p.banner = 'Usage: ruby bot.rb [--listen HOST:PORT | --dial-out URL --token T --bot NAME]'
    p.on('--listen ADDR', 'serve on this address (host:port; port 0 picks one)') { |v| opts[:listen] = v }
    p.on('--dial-out URL', 'gateway URL to dial instead, e.g. http://127.0.0.1:8080') { |v| opts[:dial_out] = v }
    p.on('--token TOKEN', 'team token, for --dial-out') { |v| opts[:token] = v }
    p.on('--bot NAME', 'registered bot name, for --dial-out') { |v| opts[:bot] = v }
  end
  parser.parse!
  return serve(opts[:listen]) if opts[:dial_out].empty?

  abort('--dial-out needs --token (or $PARLEY_TOKEN) and --bot') if opts[:token].empty? || opts[:bot].empty?
  dial_out(opts[:dial_out], opts[:token], opts[:bot])
end

exit(main) if $PROGRAM_NAME == __FILE__
